import { Buffer } from 'node:buffer'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Writable } from 'node:stream'
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
  /**
   * By name (a list of values: the header once for each, as Set-Cookie must be), or as names and
   * values one after the other (a JSON-RPC answer's: no object built for them).
   */
  headers?: Record<string, string | readonly string[]> | string[],
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
  else if (headers !== undefined)
    for (const name in headers) {
      const value = headers[name] as string | readonly string[]
      if (typeof value === 'string') raw.push(name, value)
      else for (const each of value) raw.push(name, each)
    }
  if (encoding === undefined) {
    // its length given, the body goes as it is, without chunked framing around it
    const bytes = parts ? length : typeof body === 'string' ? Buffer.byteLength(body) : length
    raw.push('content-length', String(bytes))
    res.writeHead(status, raw)
    writeParts(res, body)
    return
  }
  const vary = res.getHeader('vary') // CORS's `Origin`, when set
  raw.push('content-encoding', encoding, 'vary', vary ? `${vary}, Accept-Encoding` : 'Accept-Encoding')
  res.writeHead(status, raw)
  const compressor = createCompressor(encoding)
  compressor.on('error', () => res.destroy())
  res.once('close', () => compressor.destroy())
  compressor.pipe(res)
  writeParts(compressor, body)
}

/** The most of an answer handed to the socket (or the compressor) in one turn of the event loop. */
const pieceBytes = 64 * 1024

/**
 * Writes `body` out and ends `stream`, as fast as it takes it, never holding the event loop long: at
 * once when it is one piece (nearly every answer), else what the stream takes at once in one write
 * (headers and all, for an answer), large parts in pieces of pieceBytes; once it has enough, the rest
 * waits for it to drain and for the next turn of the loop, so other clients' requests are read and
 * answered between the pieces of a large answer. Nothing is joined or copied (a piece is a view).
 */
function writeParts(stream: ServerResponse | Writable, body: string | Buffer | AnswerParts): void {
  if (typeof body === 'string' || (Buffer.isBuffer(body) && body.length <= pieceBytes)) {
    stream.end(body)
    return
  }
  const parts = body instanceof AnswerParts ? body.parts : [body]
  let index = 0
  /** Bytes of parts[index] already written, when it goes in pieces. */
  let offset = 0
  const writeSome = (): void => {
    if (stream.destroyed) return
    stream.cork()
    let room = true
    while (room && index < parts.length) {
      const part = parts[index] as Buffer
      let piece = part
      if (part.length - offset <= pieceBytes) {
        if (offset > 0) piece = part.subarray(offset)
        index++
        offset = 0
      } else {
        piece = part.subarray(offset, offset + pieceBytes)
        offset += pieceBytes
      }
      if (index === parts.length) stream.end(piece)
      else room = stream.write(piece)
    }
    // the next pieces once these are taken, after the other work this turn found waiting
    if (index < parts.length) stream.once('drain', () => setImmediate(writeSome))
    stream.uncork()
  }
  writeSome()
}
