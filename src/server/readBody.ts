import type { IncomingMessage } from 'node:http'
import { BodyTooLargeError } from '../errors/errors.ts'

/** Reads the whole request body, refusing it as soon as it passes `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'])
  if (declared > maxBytes) return Promise.reject(new BodyTooLargeError(maxBytes))
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        req.removeAllListeners('data')
        req.resume()
        reject(new BodyTooLargeError(maxBytes))
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)))
    req.on('error', reject)
  })
}
