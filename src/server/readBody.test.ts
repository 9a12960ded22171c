import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { connect, type Socket } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { BodyTooLargeError } from '../errors/httpErrors.ts'
import { readBody } from './readBody.ts'

const maxBytes = 64

/** A server that reads every request's body with readBody and hands each call of `done` to the test. */
describe('readBody', () => {
  let server: Server
  let port: number
  const calls: { request: IncomingMessage; body: Buffer | Error }[] = []
  const waiters: (() => void)[] = []

  before(async () => {
    server = createServer((req, res) => {
      readBody(req, maxBytes, (body) => {
        calls.push({ request: req, body })
        for (const wake of waiters.splice(0)) wake()
        res.end()
      })
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const address = server.address()
    port = typeof address === 'object' && address ? address.port : 0
  })

  after(() => {
    server.closeAllConnections()
    server.close()
  })

  /** The next call of `done`, from the request sent after it was asked for. */
  function nextCall(): Promise<{ request: IncomingMessage; body: Buffer | Error }> {
    const seen = calls.length
    return new Promise((resolve) => {
      const check = () => {
        const call = calls[seen]
        if (call) resolve(call)
        else waiters.push(check)
      }
      check()
    })
  }

  async function open(): Promise<Socket> {
    const socket = connect(port, '127.0.0.1')
    await once(socket, 'connect')
    return socket
  }

  it('gives a body in one chunk as it came', async () => {
    const called = nextCall()
    const response = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{"id":1}' })
    await response.arrayBuffer()
    const { body } = await called
    assert.ok(Buffer.isBuffer(body))
    assert.equal(body.toString(), '{"id":1}')
  })

  it('joins a body sent in several chunks', async () => {
    const socket = await open()
    const called = nextCall()
    socket.write('POST / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n')
    // two chunks of the chunked encoding: the parser hands each over as a chunk of its own
    socket.write('3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n')
    const { body } = await called
    socket.destroy()
    assert.ok(Buffer.isBuffer(body))
    assert.equal(body.toString(), 'abcdef')
  })

  it('refuses a declared length over the limit before reading anything', async () => {
    const socket = await open()
    const called = nextCall()
    socket.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-length: ${maxBytes + 1}\r\n\r\n`)
    const { body } = await called
    socket.destroy()
    assert.ok(body instanceof BodyTooLargeError)
  })

  it('refuses a streamed body once it passes the limit, once, though the rest still arrives', async () => {
    const socket = await open()
    const called = nextCall()
    const chunk = 'x'.repeat(maxBytes)
    socket.write('POST / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n')
    socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
    socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
    const { request, body } = await called
    assert.ok(body instanceof BodyTooLargeError)
    // the rest of the body is drained to its end: 'end' comes, and done is not called again
    const ended = request.readableEnded ? Promise.resolve() : once(request, 'end')
    socket.write('0\r\n\r\n')
    await ended
    const count = calls.filter((call) => call.request === request).length
    socket.destroy()
    assert.equal(count, 1)
  })

  it('reports a client that goes away mid-body, once', async () => {
    const socket = await open()
    const called = nextCall()
    // the client leaves once the server has read the first bytes of its body
    const reading = new Promise<void>((resolve) =>
      server.once('request', (req: IncomingMessage) => {
        req.once('data', () => resolve())
      }),
    )
    socket.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 50\r\n\r\n{"id":')
    await reading
    socket.destroy()
    const { request, body } = await called
    assert.ok(body instanceof Error && !(body instanceof BodyTooLargeError), String(body))
    // after 'close' no event comes: done has had its one call
    if (!request.closed) await once(request, 'close')
    assert.equal(calls.filter((call) => call.request === request).length, 1)
  })
})
