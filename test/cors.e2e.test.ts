import assert from 'node:assert/strict'
import { request } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

type RawAnswer = { status: number; headers: Record<string, string | string[] | undefined>; bytes: Buffer }

/** One request with exactly these headers (fetch would add its own Accept-Encoding), bytes as sent. */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }),
      )
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

const origin = 'https://dapp.example'
const json = { 'content-type': 'application/json' }

describe('CORS and compression over HTTP', () => {
  let node: TestNode
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 5 })
    gateway = await startTestGateway({ upstreams: [node.url] })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  it('answers preflights on the JSON-RPC and Gas API routes with 204', async () => {
    for (const path of [
      `/v3/${gateway.key}`,
      `/devnet/v3/${gateway.key}`,
      '/networks/31337/suggestedGasFees',
      `/v3/${gateway.key}/networks/31337/baseFeePercentile`,
    ]) {
      const answer = await send(`${gateway.url}${path}`, 'OPTIONS', {
        origin,
        'access-control-request-method': path.includes('networks') ? 'GET' : 'POST',
        'access-control-request-headers': 'content-type, authorization, enable-failover',
      })
      assert.equal(answer.status, 204, path)
      assert.equal(answer.headers['access-control-allow-origin'], origin, path)
      assert.match(String(answer.headers['access-control-allow-methods']), /POST/)
      assert.match(String(answer.headers['access-control-allow-methods']), /GET/)
      for (const name of ['content-type', 'authorization', 'enable-failover']) {
        assert.match(String(answer.headers['access-control-allow-headers']), new RegExp(name), path)
      }
      assert.match(String(answer.headers['access-control-max-age']), /^\d+$/)
    }
  })

  it('every answer to a browser carries the CORS headers, errors included; others get none', async () => {
    const ok = await send(
      gateway.endpoint,
      'POST',
      { ...json, origin },
      JSON.stringify(rpcBody('eth_chainId')),
    )
    assert.equal(ok.status, 200)
    assert.equal(ok.headers['access-control-allow-origin'], origin)
    assert.match(String(ok.headers['access-control-expose-headers']), /X-Credits-Remaining/)
    assert.match(String(ok.headers.vary), /Origin/)

    const errors = [
      await send(`${gateway.url}/v3/${'0'.repeat(32)}`, 'POST', { ...json, origin }, '{}'), // 401
      await send(gateway.endpoint, 'POST', { 'content-type': 'text/plain', origin }, '{}'), // 415
      await send(gateway.endpoint, 'GET', { origin }), // 405
      await send(`${gateway.url}/networks/31337/baseFeePercentile`, 'GET', { origin }), // 401
    ]
    assert.deepEqual(
      errors.map((answer) => answer.status),
      [401, 415, 405, 401],
    )
    for (const answer of errors) assert.equal(answer.headers['access-control-allow-origin'], origin)

    const server = await send(gateway.endpoint, 'POST', json, JSON.stringify(rpcBody('eth_chainId')))
    assert.equal(server.headers['access-control-allow-origin'], undefined)
  })

  it('compresses large answers (br, else gzip) and never small ones', async () => {
    const body = JSON.stringify(rpcBody('eth_getBlockByNumber', ['0x3', true]))
    const direct = await postJson(node.url, body)
    assert.ok(direct.text.length > 1024, 'a full block is over the threshold')

    const plain = await send(gateway.endpoint, 'POST', json, body)
    assert.equal(plain.headers['content-encoding'], undefined)
    assert.deepEqual(JSON.parse(plain.bytes.toString()), direct.json)

    const gzip = await send(gateway.endpoint, 'POST', { ...json, 'accept-encoding': 'gzip' }, body)
    assert.equal(gzip.headers['content-encoding'], 'gzip')
    assert.match(String(gzip.headers.vary), /Accept-Encoding/)
    assert.ok(gzip.bytes.length < plain.bytes.length / 2, `${gzip.bytes.length} of ${plain.bytes.length}`)
    assert.deepEqual(JSON.parse(gunzipSync(gzip.bytes).toString()), direct.json)

    const br = await send(
      gateway.endpoint,
      'POST',
      { ...json, 'accept-encoding': 'gzip, deflate, br', origin },
      body,
    )
    assert.equal(br.headers['content-encoding'], 'br')
    assert.match(String(br.headers.vary), /Origin, Accept-Encoding/)
    assert.deepEqual(JSON.parse(brotliDecompressSync(br.bytes).toString()), direct.json)

    const small = await send(
      gateway.endpoint,
      'POST',
      { ...json, 'accept-encoding': 'gzip, br' },
      JSON.stringify(rpcBody('eth_chainId')),
    )
    assert.equal(small.headers['content-encoding'], undefined)
    assert.deepEqual(JSON.parse(small.bytes.toString()), { jsonrpc: '2.0', id: 1, result: '0x7a69' })
  })
})
