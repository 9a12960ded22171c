import type { IncomingMessage } from 'node:http'
import { BodyTooLargeError } from '../errors/errors.ts'

/** Reads the whole request body, refusing it as soon as it passes `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'])
  if (declared > maxBytes) return Promise.reject(new BodyTooLargeError(maxBytes))
  return new Promise((resolve, reject) => {
    // most bodies come in one chunk: no list for them
    let first: Buffer | undefined
    let more: Buffer[] | undefined
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        req.removeAllListeners('data')
        req.resume()
        reject(new BodyTooLargeError(maxBytes))
        return
      }
      if (first === undefined) first = chunk
      else if (more === undefined) more = [first, chunk]
      else more.push(chunk)
    })
    req.on('end', () => resolve(more ? Buffer.concat(more, size) : (first ?? Buffer.alloc(0))))
    req.on('error', reject)
  })
}
