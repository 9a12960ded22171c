import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { connect, type Socket } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { BodyStalledError, BodyTooLargeError } from '../errors/httpErrors.ts'
import { ByteBulkhead } from '../failsafe/ByteBulkhead.ts'
import { readBody } from './readBody.ts'

const maxBytes = 64
/** Bodies posted to /held may be this large, take from `bulkhead` past their first 16 bytes, and may stall this long holding it. */
const heldMaxBytes = 1024 * 1024
const stallTimeoutMs = 200

/** A server that reads every request's body with readBody and hands each call of `done` to the test. */
describe('readBody', () => {
  let server: Server
  let port: number
  const calls: { request: IncomingMessage; body: Buffer | Error }[] = []
  const waiters: (() => void)[] = []
  const bulkhead = new ByteBulkhead(heldMaxBytes, 16)

  before(async () => {
    server = createServer((req, res) => {
      const holder = req.url === '/held' ? bulkhead.holder() : undefined
      const done = (body: Buffer | Error) => {
        holder?.release()
        calls.push({ request: req, body })
        for (const wake of waiters.splice(0)) wake()
        res.end()
      }
      if (holder) readBody(req, heldMaxBytes, done, { holder, stallTimeoutMs })
      else readBody(req, maxBytes, done)
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

  it('refuses a body that stalls holding part of the bound, once its stall timeout passes', async () => {
    const socket = await open()
    const called = nextCall()
    socket.write('POST /held HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n')
    socket.write('x'.repeat(999))
    const { body } = await called
    socket.destroy()
    assert.ok(body instanceof BodyStalledError, String(body))
    assert.equal(body.message, `request body too slow: less than 65536 bytes in ${stallTimeoutMs} ms`)
  })

  it('refuses a body that trickles, bringing less than 64 KiB in a span', async () => {
    const socket = await open()
    const called = nextCall()
    socket.write(`POST /held HTTP/1.1\r\nhost: x\r\ncontent-length: ${heldMaxBytes}\r\n\r\n`)
    // a kilobyte every 20 ms: 10 KiB a span at most, however late the timers run
    const trickle = setInterval(() => socket.write('x'.repeat(1024)), 20)
    const { body } = await called
    clearInterval(trickle)
    socket.destroy()
    assert.ok(body instanceof BodyStalledError, String(body))
  })

  it('lets a body stall within its free bytes: it holds nothing of the bound', async () => {
    const idle = await open()
    const heldCalled = nextCall()
    idle.write('POST /held HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n')
    idle.write('x'.repeat(16))
    // a second body stalls past its free bytes: refused after the timeout, while the first waits on
    const stalled = await open()
    stalled.write('POST /held HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n')
    stalled.write('x'.repeat(17))
    const { request, body } = await heldCalled
    assert.ok(body instanceof BodyStalledError, String(body))
    const idleCalled = nextCall()
    idle.write('x'.repeat(84))
    const idleBody = await idleCalled
    stalled.destroy()
    idle.destroy()
    assert.notEqual(idleBody.request, request)
    assert.equal((idleBody.body as Buffer).length, 100, 'the body within its free bytes was read whole')
    assert.equal(bulkhead.inUseBytes, 0)
  })
})
