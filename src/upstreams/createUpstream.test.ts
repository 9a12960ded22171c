import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { until } from '../../test/helpers/until.ts'
import { createUpstream, type PostResult } from './createUpstream.ts'

/** An answer of 1.5 MB, each of its bytes telling where it is. */
const large = Buffer.from(
  `{"jsonrpc":"2.0","id":1,"result":"0x${Array.from({ length: 150_000 }, (_, index) => String(index % 1e10).padStart(10, '0')).join('')}"}`,
)

describe('createUpstream', () => {
  let server: Server
  let url = ''
  let closedMidAnswer = 0
  let serverAnswering = false

  before(async () => {
    server = createServer((req, res) => {
      req.resume()
      if (req.url === '/chunks') {
        // three writes, so the answer comes in more than one piece
        res.writeHead(200, { 'content-type': 'application/json' })
        res.write('{"jsonrpc":"2.0",')
        setImmediate(() => {
          res.write('"id":1,')
          setImmediate(() => res.end('"result":"0x1"}'))
        })
      } else if (req.url === '/large' || req.url === '/large-unannounced') {
        // a large answer in many writes, with its length announced or not (chunked)
        const headers: Record<string, string | number> = { 'content-type': 'application/json' }
        if (req.url === '/large') headers['content-length'] = large.length
        res.writeHead(200, headers)
        let offset = 0
        const writeNext = () => {
          if (offset >= large.length) return void res.end()
          res.write(large.subarray(offset, offset + 100_000))
          offset += 100_000
          setImmediate(writeNext)
        }
        writeNext()
      } else if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(`{"result":"${'a'.repeat(10_000)}"}`)
      } else if (req.url === '/hang') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.write('{')
        serverAnswering = true
        res.on('close', () => closedMidAnswer++)
      } else {
        res.writeHead(503).end('busy')
      }
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })

  after(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const dispatch = (
    path: string,
    maxResponseBytes: number,
    onStart?: (abort: (e: Error) => void) => void,
  ) => {
    const upstream = createUpstream({ url: `${url}${path}` }, { connections: 1, maxResponseBytes })
    return new Promise<PostResult>((resolve) =>
      upstream.dispatch('{}', onStart ? { onStart } : {}, resolve),
    ).finally(() => upstream.close())
  }

  it('collects an answer that comes in pieces, with its status', async () => {
    const result = await dispatch('/chunks', 1_000)
    assert.ok('response' in result)
    assert.equal(result.response.status, 200)
    assert.equal(result.response.body.toString(), '{"jsonrpc":"2.0","id":1,"result":"0x1"}')
  })

  it('collects a large answer of many pieces, its length announced or not, byte for byte', async () => {
    for (const path of ['/large', '/large-unannounced']) {
      const result = await dispatch(path, 2 * large.length)
      assert.ok('response' in result, path)
      assert.equal(result.response.body.length, large.length, path)
      assert.ok(result.response.body.equals(large), path)
    }
  })

  it('passes on a status that is not 200 with its body', async () => {
    const result = await dispatch('/other', 1_000)
    assert.ok('response' in result)
    assert.equal(result.response.status, 503)
    assert.equal(result.response.body.toString(), 'busy')
  })

  it('refuses an answer larger than maxResponseBytes', async () => {
    const result = await dispatch('/big', 5_000)
    assert.ok('error' in result)
    assert.equal(result.error.message, 'upstream answer larger than 5000 bytes')
  })

  it('ends with the reason when the abort it was handed is called, and closes the connection', async () => {
    let abort: ((reason: Error) => void) | undefined
    const pending = dispatch('/hang', 1_000, (abortRequest) => {
      abort = abortRequest
    })
    // the node has begun its answer, and waits: the abort ends the request mid-answer
    await until(() => abort !== undefined && serverAnswering, 'the answer to begin')
    abort?.(new Error('the client went away'))
    const result = await pending
    assert.ok('error' in result)
    assert.equal(result.error.message, 'the client went away')
    await until(() => closedMidAnswer === 1, 'the node to see the connection closed')
  })
})
