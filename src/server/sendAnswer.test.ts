import assert from 'node:assert/strict'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { sendAnswer } from './sendAnswer.ts'

const options = { compression: { enabled: true, minBytes: 1024 }, sendTimeoutMs: 30_000 }

/** `bytes` of JSON text, each stretch telling where it is, so that a piece out of place shows. */
function textOf(bytes: number, mark: string): Buffer {
  const unit = `${mark}:`
  return Buffer.from(
    Array.from({ length: Math.ceil(bytes / 16) }, (_, index) => `${unit}${index}`.padEnd(16, '.'))
      .join('')
      .slice(0, bytes),
  )
}

const bodies: Record<string, string | Buffer | AnswerParts> = {
  small: '{"jsonrpc":"2.0","id":1,"result":"0x1"}',
  large: textOf(2_000_000, 'L'),
  parts: new AnswerParts([
    Buffer.from('['),
    textOf(1_000_000, 'A'),
    Buffer.from(','),
    textOf(3_000_001, 'B'),
    Buffer.from(']'),
  ]),
}

const bytesOf = (body: string | Buffer | AnswerParts) =>
  body instanceof AnswerParts ? body.toBuffer() : Buffer.from(body)

/**
 * Answers go out whole and in order, in one piece or many, compressed or not: large ones are
 * written a piece at a time (the event loop free between pieces), never joined first.
 */
describe('sendAnswer', () => {
  let server: Server
  let port = 0

  before(async () => {
    server = createServer((req, res) => {
      const body = bodies[(req.url ?? '/').slice(1)] ?? ''
      sendAnswer(req, res, 200, body, options, ['x-mark', 'kept'])
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  after(() => new Promise<void>((resolve) => server.close(() => resolve())))

  function get(path: string, acceptEncoding?: string) {
    return new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      const headers = acceptEncoding ? { 'accept-encoding': acceptEncoding } : undefined
      request({ port, host: '127.0.0.1', path, headers }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }))
        res.on('error', reject)
      })
        .on('error', reject)
        .end()
    })
  }

  for (const name of Object.keys(bodies)) {
    it(`${name}: whole and in order, plain, brotli and gzip`, async () => {
      const expected = bytesOf(bodies[name] as string | Buffer | AnswerParts)
      const plain = await get(`/${name}`)
      assert.equal(plain.headers['content-length'], String(expected.length))
      assert.equal(plain.headers['x-mark'], 'kept')
      assert.ok(plain.body.equals(expected))
      if (expected.length < options.compression.minBytes) return
      const br = await get(`/${name}`, 'br')
      assert.equal(br.headers['content-encoding'], 'br')
      assert.ok(brotliDecompressSync(br.body).equals(expected))
      const gzip = await get(`/${name}`, 'gzip')
      assert.equal(gzip.headers['content-encoding'], 'gzip')
      assert.ok(gunzipSync(gzip.body).equals(expected))
    })
  }
})
