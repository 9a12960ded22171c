import type { IncomingMessage } from 'node:http'
import { BodyTooLargeError } from '../errors/httpErrors.ts'
import { ServerBusyError } from '../errors/limitErrors.ts'
import type { ByteHolder } from '../failsafe/ByteBulkhead.ts'

/**
 * Reads the whole request body, refusing it as soon as it passes `maxBytes`, or as soon as the
 * process's bound on bodies in flight has no room for it (`held`, when given, takes each chunk; the
 * caller releases it when the request ends). `done` is called once, with the bytes or with what
 * stopped them (BodyTooLargeError, ServerBusyError, or the stream's own error).
 */
export function readBody(
  req: IncomingMessage,
  maxBytes: number,
  done: (body: Buffer | Error) => void,
  held?: ByteHolder,
): void {
  const declared = Number(req.headers['content-length'])
  if (declared > maxBytes) {
    done(new BodyTooLargeError(maxBytes))
    return
  }
  // made for the first chunk (most bodies have one): an empty list would be given room for 16
  let chunks: Buffer[] | undefined
  let size = 0
  let finished = false
  // a body refused mid-stream is still drained to its end, and a stream may fail after it ended
  const finish = (body: Buffer | Error) => {
    if (finished) return
    finished = true
    done(body)
  }
  const refuse = (refusal: Error) => {
    req.removeAllListeners('data')
    req.resume()
    finish(refusal)
  }
  req.on('data', (chunk: Buffer) => {
    if (size + chunk.length > maxBytes) return refuse(new BodyTooLargeError(maxBytes))
    if (held && !held.take(chunk.length)) {
      return refuse(new ServerBusyError({ logDetails: 'request bodies in flight' }))
    }
    size += chunk.length
    if (chunks) chunks.push(chunk)
    else chunks = [chunk]
  })
  req.on('end', () =>
    finish(chunks?.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks ?? [], size)),
  )
  req.on('error', finish)
}

/** The whole body as text, for the routes that read one now and then (admin, dashboard). */
export function readBodyText(req: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) =>
    readBody(req, maxBytes, (body) => (Buffer.isBuffer(body) ? resolve(body.toString()) : reject(body))),
  )
}
