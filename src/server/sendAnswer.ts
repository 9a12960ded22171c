import type { IncomingMessage, ServerResponse } from 'node:http'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { smallMessageBytes } from '../upstreams/AnswerBudget.ts'
import { type CompressionOptions, chooseEncoding, createCompressor } from './compression.ts'
import { dropIfNotTaken } from './dropIfNotTaken.ts'

export type SendAnswerOptions = {
  compression: CompressionOptions
  /** An answer of more than smallMessageBytes that the client has not taken within this is dropped with its connection. */
  sendTimeoutMs: number
}

/** An answer's bytes: compressed and streamed when the client accepts it and it is large enough. */
export function sendAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: string | Buffer | AnswerParts,
  options: SendAnswerOptions,
  /** By name, or as names and values one after the other (a JSON-RPC answer's: no object built for them). */
  headers?: Record<string, string> | string[],
  contentType = 'application/json',
): void {
  if (res.destroyed) return
  const parts = body instanceof AnswerParts ? body : undefined
  const length = parts ? parts.byteLength : (body as string | Buffer).length
  // a client that does not take a large answer does not hold it (and the memory) for long
  if (length > smallMessageBytes) dropIfNotTaken(res, options.sendTimeoutMs)
  const encoding = chooseEncoding(req.headers['accept-encoding'], length, options.compression)
  // a flat [name, value, ...] list (CORS headers set earlier with setHeader are merged by Node)
  const raw: string[] = ['content-type', contentType]
  if (Array.isArray(headers)) for (const each of headers) raw.push(each)
  else if (headers !== undefined) for (const name in headers) raw.push(name, headers[name] as string)
  if (encoding === undefined) {
    if (parts) {
      // the parts as they are, headers and all in one write once uncorked; no joined copy
      raw.push('content-length', String(length))
      res.writeHead(status, raw)
      res.cork()
      for (const part of parts.parts) res.write(part)
      res.end()
      res.uncork()
      return
    }
    // its length given, the body goes as it is, without chunked framing around it
    const bytes = typeof body === 'string' ? Buffer.byteLength(body) : (body as Buffer).length
    raw.push('content-length', String(bytes))
    res.writeHead(status, raw)
    res.end(body)
    return
  }
  const vary = res.getHeader('vary') // CORS's `Origin`, when set
  raw.push('content-encoding', encoding, 'vary', vary ? `${vary}, Accept-Encoding` : 'Accept-Encoding')
  res.writeHead(status, raw)
  const compressor = createCompressor(encoding)
  compressor.on('error', () => res.destroy())
  res.once('close', () => compressor.destroy())
  compressor.pipe(res)
  if (parts) {
    for (const part of parts.parts) compressor.write(part)
    compressor.end()
  } else compressor.end(body)
}
