import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { until } from '../../test/helpers/until.ts'
import { createUpstream, type PostResult } from './createUpstream.ts'

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
