import type { IncomingMessage } from 'node:http'
import { BodyTooLargeError } from '../errors/errors.ts'

/** Reads the whole request body, refusing it as soon as it passes `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'])
  if (declared > maxBytes) return Promise.reject(new BodyTooLargeError(maxBytes))
  return new Promise((resolve, reject) => {
    // made for the first chunk (most bodies have one): an empty list would be given room for 16
    let chunks: Buffer[] | undefined
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        req.removeAllListeners('data')
        req.resume()
        reject(new BodyTooLargeError(maxBytes))
        return
      }
      if (chunks) chunks.push(chunk)
      else chunks = [chunk]
    })
    req.on('end', () =>
      resolve(chunks?.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks ?? [], size)),
    )
    req.on('error', reject)
  })
}
