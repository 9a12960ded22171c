import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'

/** What the fake does with the next requests: only what a real node cannot be made to do. */
export type FakeBehaviour =
  | { kind: 'hang' }
  | { kind: 'status'; status: number; body?: string }
  | { kind: 'garbage' }
  | { kind: 'drop' }
  | { kind: 'json'; respond: (request: { method: string; id: unknown; params: unknown[] }) => unknown }
  /** Forwards to a real node, recording each request: counts what the gateway asked for. */
  | { kind: 'proxy'; target: string }
  /** Answers with `respond`'s result (or what its promise resolves to) where it gives one (not undefined); forwards the rest to `target`. */
  | {
      kind: 'rewrite'
      target: string
      respond: (request: { method: string; id: unknown; params: unknown[] }) => unknown
    }
  /**
   * Answers the error `refuse` gives for a request (with its HTTP status, 200 by default), as a
   * provider's limiter refuses; forwards the others to `target`.
   */
  | {
      kind: 'refuseOr'
      target: string
      refuse: (request: {
        method: string
        id: unknown
        params: unknown[]
      }) => { status?: number; error: { code: number; message: string } } | undefined
    }
  /** Answers a JSON-RPC error object (HTTP 200), as nodes answer what they cannot do. */
  | { kind: 'rpcError'; error: { code: number; message: string; data?: unknown } }
  /** Forwards the call to `target` (which takes it), then drops the connection instead of answering. */
  | { kind: 'deliverThenDrop'; target: string }
  /** Calls of `methods` get `behaviour`; every other call (head polls included) is forwarded to `otherwise`. */
  | { kind: 'forMethods'; methods: string[]; behaviour: FakeBehaviour; otherwise: string }
  /**
   * eth_sendRawTransactionSync as geth answers it (EIP-7966), over `target`'s eth_sendRawTransaction
   * and receipts: anvil 1.7 refuses the timeout argument and answers only its own fixed 30 s wait
   * (syncSend); every other call is forwarded to `target`.
   */
  | { kind: 'syncSends'; target: string; defaultTimeoutMs: number }

/** The target a fake upstream forwards to could not be reached (or went away mid-answer). */
class TargetGoneError extends Error {
  constructor(target: string, cause: unknown) {
    super(`${target} did not answer`, { cause })
  }
}

export type FakeUpstream = {
  url: string
  /** Bodies received, parsed. */
  requests: { method: string; id: unknown; params: unknown[] }[]
  /** The path and headers of each request, in the same order. */
  received: { path: string; headers: Record<string, string | string[] | undefined> }[]
  behave(behaviour: FakeBehaviour): void
  /** Stops listening and drops every connection (a dead node: connections are refused). */
  kill(): Promise<void>
  /** Listens again on the same port. */
  revive(): Promise<void>
  close(): Promise<void>
}

/**
 * A scriptable JSON-RPC upstream on loopback for faults: hangs, error statuses, garbage, dropped
 * sockets, node error answers no real node can be made to give.
 */
export async function startFakeUpstream(initial: FakeBehaviour = { kind: 'hang' }): Promise<FakeUpstream> {
  let behaviour = initial
  const requests: FakeUpstream['requests'] = []
  const received: FakeUpstream['received'] = []
  const hanging = new Set<ServerResponse>()

  type Request = { method: string; id: unknown; params: unknown[] }

  async function forward(target: string, body: Request): Promise<{ status: number; text: string }> {
    try {
      const answer = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return { status: answer.status, text: await answer.text() }
    } catch (cause) {
      throw new TargetGoneError(target, cause)
    }
  }

  async function serve(now: FakeBehaviour, body: Request, req: IncomingMessage, res: ServerResponse) {
    switch (now.kind) {
      case 'hang':
        hanging.add(res)
        res.on('close', () => hanging.delete(res))
        return
      case 'status':
        res.writeHead(now.status, { 'content-type': 'application/json' })
        res.end(now.body ?? '{"error":"nope"}')
        return
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end('<html>bad gateway</html>')
        return
      case 'drop':
        req.socket.destroy()
        return
      case 'json':
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: now.respond(body) }))
        return
      case 'rpcError':
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: now.error }))
        return
      case 'refuseOr': {
        const refused = now.refuse(body)
        if (!refused) return serve({ kind: 'proxy', target: now.target }, body, req, res)
        res.writeHead(refused.status ?? 200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: refused.error }))
        return
      }
      case 'deliverThenDrop':
        await forward(now.target, body)
        req.socket.destroy()
        return
      case 'syncSends': {
        if (body.method !== 'eth_sendRawTransactionSync') {
          return serve({ kind: 'proxy', target: now.target }, body, req, res)
        }
        const answer = await syncSend(now.target, now.defaultTimeoutMs, body.params)
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, ...answer }))
        return
      }
      case 'forMethods':
        return serve(
          now.methods.includes(body.method) ? now.behaviour : { kind: 'proxy', target: now.otherwise },
          body,
          req,
          res,
        )
      case 'rewrite':
      case 'proxy': {
        // a promise is waited for: an answer held back until a test releases it
        const result = now.kind === 'rewrite' ? await now.respond(body) : undefined
        if (result !== undefined) {
          res.writeHead(200, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }))
          return
        }
        const answer = await forward(now.target, body)
        res.writeHead(answer.status, { 'content-type': 'application/json' })
        res.end(answer.text)
        return
      }
    }
  }

  /** One call to `target`: its result or error. */
  async function ask(target: string, method: string, params: unknown[]) {
    const answer = await forward(target, { jsonrpc: '2.0', id: 1, method, params } as unknown as Request)
    return JSON.parse(answer.text) as { result?: unknown; error?: unknown }
  }

  /**
   * What geth answers an eth_sendRawTransactionSync: a timeout that is not a JSON number refused as
   * invalid params; the send's own error at once; else the receipt as soon as there is one, or after
   * the timeout given (the default for none or 0) the EIP's code 4, the hash as `data`. geth waits on
   * new blocks; this asks for the receipt every 20 ms.
   */
  async function syncSend(target: string, defaultTimeoutMs: number, params: unknown[]) {
    const [raw, timeout] = params
    if (timeout !== undefined && timeout !== null && typeof timeout !== 'number') {
      const message = 'invalid argument 1: json: cannot unmarshal string into Go value of type uint64'
      return { error: { code: -32602, message } }
    }
    const sent = await ask(target, 'eth_sendRawTransaction', [raw])
    if (sent.error) return { error: sent.error }
    const timeoutMs = typeof timeout === 'number' && timeout > 0 ? timeout : defaultTimeoutMs
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const { result } = await ask(target, 'eth_getTransactionReceipt', [sent.result])
      if (result) return { result }
      const leftMs = deadline - Date.now()
      if (leftMs <= 0) {
        const message = `The transaction was added to the transaction pool but wasn't processed in ${timeoutMs}ms`
        return { error: { code: 4, message, data: sent.result } }
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(20, leftMs)))
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = JSON.parse(Buffer.concat(chunks).toString())
    requests.push(body)
    received.push({ path: req.url ?? '', headers: { ...req.headers } })
    await serve(behaviour, body, req, res)
  }
  // a target gone mid-call (a test stopping its node while a call is forwarded) drops the connection,
  // as a proxy whose node went away does, never an unhandled rejection after the test; any other
  // error (a test's own `respond` or `refuse` throwing) still fails the run
  const server = createServer((req, res) =>
    handle(req, res).catch((err: unknown) => {
      if (!(err instanceof TargetGoneError)) throw err
      req.socket.destroy()
    }),
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const stop = async () => {
    if (!server.listening) return
    for (const res of hanging) res.destroy()
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    server.closeAllConnections()
    await closed
  }

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    received,
    behave(next) {
      behaviour = next
    },
    kill: stop,
    revive: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: stop,
  }
}
