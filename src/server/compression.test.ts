import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { chooseEncoding, createCompressor } from './compression.ts'

const on = { enabled: true, minBytes: 1024 }

describe('chooseEncoding', () => {
  it('prefers br, then gzip, for answers at or over the threshold', () => {
    assert.equal(chooseEncoding('gzip, deflate, br', 1024, on), 'br')
    assert.equal(chooseEncoding('gzip', 5000, on), 'gzip')
    assert.equal(chooseEncoding('deflate', 5000, on), undefined)
  })

  it('never compresses small answers, clients that do not ask, or when off', () => {
    assert.equal(chooseEncoding('br', 1023, on), undefined)
    assert.equal(chooseEncoding(undefined, 5000, on), undefined)
    assert.equal(chooseEncoding('br', 5000, { ...on, enabled: false }), undefined)
  })

  it('reads q-values and the wildcard', () => {
    assert.equal(chooseEncoding('br;q=0, gzip;q=0.5', 5000, on), 'gzip')
    assert.equal(chooseEncoding('br; q=0.0, gzip;q=0', 5000, on), undefined)
    assert.equal(chooseEncoding('*', 5000, on), 'br')
    assert.equal(chooseEncoding('*, br;q=0', 5000, on), 'gzip')
    assert.equal(chooseEncoding('identity', 5000, on), undefined)
  })
})

describe('createCompressor', () => {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    result: Array.from({ length: 200 }, (_, i) => `0x${i}`),
  })

  async function compress(encoding: 'br' | 'gzip'): Promise<Buffer> {
    const compressor = createCompressor(encoding)
    const chunks: Buffer[] = []
    compressor.on('data', (chunk: Buffer) => chunks.push(chunk))
    const done = new Promise((resolve) => compressor.on('end', resolve))
    compressor.end(body)
    await done
    return Buffer.concat(chunks)
  }

  it('round-trips and shrinks JSON', async () => {
    const br = await compress('br')
    assert.equal(brotliDecompressSync(br).toString(), body)
    assert.ok(br.length < body.length / 2)
    const gzip = await compress('gzip')
    assert.equal(gunzipSync(gzip).toString(), body)
    assert.ok(gzip.length < body.length / 2)
  })
})
