import { Buffer } from 'node:buffer'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { Duplex } from 'node:stream'
import type { AccountApiRequest, AccountApiResponse } from '../accounts/accountApiTypes.ts'
import type { AdminRequest, AdminResponse } from '../admin/adminApiTypes.ts'
import type { DashboardRequest } from '../admin/handleDashboard.ts'
import type { PortalPageRequest } from '../admin/handlePortalPages.ts'
import type { WebAnswer } from '../admin/webAnswers.ts'
import {
  HttpMethodNotAllowedError,
  RouteNotFoundError,
  UnsupportedContentTypeError,
  UpgradeRequiredError,
} from '../errors/httpErrors.ts'
import { TollgateError } from '../errors/TollgateError.ts'
import { toWireError } from '../errors/toWireError.ts'
import type { ByteBulkhead, ByteHolder } from '../failsafe/ByteBulkhead.ts'
import { Cancellation } from '../failsafe/Cancellation.ts'
import type { GasRequest, GasResponse } from '../gas/handleGasRequest.ts'
import type { RpcAnswerCounts } from '../metrics/createMetrics.ts'
import type { MetricsRequest, MetricsResponse } from '../metrics/handleMetrics.ts'
import type { RpcAnswer, RpcArrival } from '../pipeline/handleRpc.ts'
import type { AnswerMemory } from '../upstreams/AnswerBudget.ts'
import type { CompressionOptions } from './compression.ts'
import type { CorsOptions } from './corsHeaders.ts'
import { createClientAddressOf } from './createClientAddressOf.ts'
import { createSharesOf } from './createSharesOf.ts'
import { handleCors } from './handleCors.ts'
import { isJsonContentType } from './isJsonContentType.ts'
import { isSmallBody } from './isSmallBody.ts'
import { keyRequestOf } from './keyRequestOf.ts'
import { limitConnectionsPerAddress } from './limitConnectionsPerAddress.ts'
import { parseRoute, type Route } from './parseRoute.ts'
import { readBody, readBodyText } from './readBody.ts'
import { sendAnswer } from './sendAnswer.ts'

export type HttpHandlers = {
  rpc(request: RpcArrival): Promise<RpcAnswer>
  ready(): Promise<{ ok: boolean; body: unknown }>
  /** Undefined when metrics are off: /metrics is then not found. */
  metrics: ((request: MetricsRequest) => Promise<MetricsResponse>) | undefined
  gas(request: GasRequest): Promise<GasResponse>
  admin(request: AdminRequest): Promise<AdminResponse>
  /** The account API (/account/api), for key holders signed in with their account's token. */
  account(request: AccountApiRequest): Promise<AccountApiResponse>
  /** The key holders' portal: its page and assets at /account/. */
  portal(request: PortalPageRequest): WebAnswer
  /** Undefined when the dashboard is off: /dashboard is then not found. */
  dashboard?: ((request: DashboardRequest) => Promise<WebAnswer>) | undefined
  /** The server's `upgrade` event: the WebSocket adapter's (createWebSockets). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void
}

export type HttpServerOptions = {
  maxBodyBytes: number
  keepAliveTimeoutMs: number
  /** A request's headers must be in within this; else 408 and the connection closes (slowloris). */
  headersTimeoutMs: number
  /** The whole request, body included, must be in within this (0: no limit); the answer is not limited. */
  requestTimeoutMs: number
  /** Open connections (HTTP and WebSocket); more are closed at once. */
  maxConnections: number
  /** Open connections from one remote address; more are closed at once. */
  maxConnectionsPerAddress: number
  /** Remote addresses the per-address limit (and the per-address shares of bytes in flight) does not apply to. */
  maxConnectionsPerAddressExempt: readonly string[]
  /** Proxies whose X-Forwarded-For names the client (createClientAddressOf). */
  trustedProxies: readonly string[]
  cors: CorsOptions
  compression: CompressionOptions
  /**
   * The process's bound on JSON-RPC request bodies held at once (shared with the WebSocket endpoint;
   * full, or the key's or the client address's share full: 503).
   */
  bodies: ByteBulkhead
  /** A body holding part of `bodies` must bring each further 64 KiB within this of the one before; else 408 (0: no limit). */
  bodyStallTimeoutMs: number
  /** Each JSON-RPC request's answer budget (shared with the WebSocket endpoint: one bound for the process). */
  answers: AnswerMemory
  /** An answer of more than smallMessageBytes that the client has not taken within this is dropped with its connection. */
  sendTimeoutMs: number
  /** Where JSON-RPC answers are counted by status class (a plain increment each), when metrics are on. */
  rpcAnswers?: RpcAnswerCounts | undefined
  /**
   * Told each JSON-RPC answer's status and how long the request took (from its arrival to its answer
   * handed to the connection), with the network the request named (path or Host): the dashboard's
   * answers and /metrics' request durations.
   */
  onRpcAnswer?:
    | ((networkName: string | undefined, host: string | undefined, status: number, tookMs: number) => void)
    | undefined
}

export type HttpServer = {
  listen(port: number, host: string): Promise<{ port: number; host: string }>
  /** Stops accepting, lets in-flight requests finish for up to `graceMs`, then closes every connection. */
  close(graceMs: number): Promise<void>
}

const adminMaxBodyBytes = 1024 * 1024

/** The HTTP adapter: bytes in, bytes out. Routing, limits and headers; everything else is the handlers'. */
export function createHttpServer(handlers: HttpHandlers, options: HttpServerOptions): HttpServer {
  const { rpcAnswers, onRpcAnswer, answers, bodies } = options
  let inFlight = 0
  let drained: (() => void) | undefined

  const server = createServer(
    {
      keepAliveTimeout: options.keepAliveTimeoutMs,
      headersTimeout: options.headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      // how often Node looks for connections past those timeouts (its default, 30 s, would let a
      // 10 s headers timeout run to 40 s)
      connectionsCheckingInterval: Math.min(1_000, options.headersTimeoutMs),
    },
    (req, res) => {
      inFlight++
      const route = parseRoute(req.url ?? '/')
      if (route.kind === 'rpc') answerRpc(req, res, route)
      else {
        res.on('close', ended)
        void handle(req, res, route)
      }
    },
  )
  server.maxConnections = options.maxConnections

  function ended(): void {
    inFlight--
    if (inFlight === 0) drained?.()
  }
  const clientAddressOf = createClientAddressOf(options.trustedProxies)
  const sharesOf = createSharesOf(options.maxConnectionsPerAddressExempt)
  limitConnectionsPerAddress(server, options.maxConnectionsPerAddress, options.maxConnectionsPerAddressExempt)
  server.on('upgrade', handlers.upgrade)

  /**
   * An error thrown on any route, answered as a JSON-RPC error with id null: what the route handlers
   * did not answer themselves (no route, a wrong HTTP method, a body too large, /metrics' 401).
   */
  function sendError(res: ServerResponse, err: unknown): void {
    if (res.headersSent) {
      res.destroy()
      return
    }
    const { httpStatus, body, headers } = toWireError(err, 'jsonrpc')
    sendAnswer(res.req, res, httpStatus, JSON.stringify(body), options, headers)
  }

  /**
   * A JSON-RPC POST (nearly every request): answered when the pipeline's promise settles. The
   * pipeline reads the body (readBody here) only once the key admits the request; what it rejects
   * with (the body stream's own error among it) is answered by sendError.
   */
  function answerRpc(req: IncomingMessage, res: ServerResponse, route: Route & { kind: 'rpc' }): void {
    const receivedMs = onRpcAnswer ? performance.now() : 0
    const cancellation = new Cancellation()
    const keyRequest = keyRequestOf(req, route, clientAddressOf(req), sharesOf)
    const answerBudget = answers.forRequest(keyRequest.shares)
    /** What the body holds of the bound on bodies in flight; undefined while it has not been asked for. */
    let body: ByteHolder | undefined
    // 'close' comes once: a plain listener, cheaper than once()'s wrapper (this is every request)
    res.on('close', () => {
      ended()
      if (!res.writableFinished) cancellation.cancel()
      answerBudget.release()
      body?.release()
    })
    try {
      if (handleCors(req, res, options.cors)) return
      if (req.method !== 'POST') {
        if (rpcAnswers) rpcAnswers['4xx']++
        throw new HttpMethodNotAllowedError('POST')
      }
      const readBodyOf = () =>
        new Promise<Buffer>((resolve, reject) => {
          const holder = bodies.holder(keyRequest.shares)
          body = holder
          if (!isJsonContentType(req.headers['content-type'])) {
            reject(refusedBody(res, new UnsupportedContentTypeError()))
            return
          }
          readBody(
            req,
            options.maxBodyBytes,
            (read) => {
              if (Buffer.isBuffer(read)) return resolve(read)
              // a body refused or gone holds nothing from now on, though its answer is still to go
              holder.release()
              if (read instanceof TollgateError) reject(refusedBody(res, read))
              else reject(read) // the stream's own error: the client went away mid-body (sendError below)
            },
            { holder, stallTimeoutMs: options.bodyStallTimeoutMs },
          )
        })
      handlers.rpc({ transport: 'http', keyRequest, body: readBodyOf, cancellation, answerBudget }).then(
        (answer) => {
          try {
            if (rpcAnswers) {
              if (answer.status >= 500) rpcAnswers['5xx']++
              else if (answer.status >= 400) rpcAnswers['4xx']++
              else rpcAnswers['2xx']++
            }
            // refused from its headers alone: a large body still on its way is not read, nor waited
            // for (a small one is let through, as Node does, to keep the connection)
            if (body === undefined && !req.complete && !isSmallBody(req)) {
              res.setHeader('connection', 'close')
            }
            sendAnswer(req, res, answer.status, answer.body, options, answer.headers)
            if (onRpcAnswer) {
              const tookMs = performance.now() - receivedMs
              onRpcAnswer(route.networkName, req.headers.host, answer.status, tookMs)
            }
          } catch (err) {
            sendError(res, err)
          }
        },
        (err: unknown) => sendError(res, err),
      )
    } catch (err) {
      sendError(res, err)
    }
  }

  /** A body refused before it was read whole (413, 415, 408, a busy server): it may still be arriving, so the connection closes. */
  function refusedBody(res: ServerResponse, refusal: TollgateError): TollgateError {
    res.setHeader('connection', 'close')
    return refusal
  }

  /** Answers every other route; what it throws is answered by sendError. */
  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    route: Exclude<Route, { kind: 'rpc' }>,
  ): Promise<void> {
    try {
      switch (route.kind) {
        case 'healthz':
          return sendAnswer(req, res, 200, JSON.stringify({ status: 'ok' }), options)
        case 'readyz': {
          const { ok, body } = await handlers.ready()
          return sendAnswer(req, res, ok ? 200 : 503, JSON.stringify(body), options)
        }
        case 'metrics': {
          if (!handlers.metrics) throw new RouteNotFoundError()
          if (req.method !== 'GET') throw new HttpMethodNotAllowedError('GET')
          const answer = await handlers.metrics({ authorization: req.headers.authorization })
          if (res.destroyed) return
          res.writeHead(answer.status, { 'content-type': answer.contentType })
          res.end(answer.body)
          return
        }
        case 'admin': {
          const body = await readBodyText(req, adminMaxBodyBytes)
          const answer = await handlers.admin({
            method: req.method ?? 'GET',
            url: req.url ?? '/',
            authorization: req.headers.authorization,
            body,
            clientAddress: clientAddressOf(req),
          })
          const text = answer.contentType ? String(answer.body) : JSON.stringify(answer.body)
          return sendAnswer(req, res, answer.status, text, options, answer.headers, answer.contentType)
        }
        case 'account': {
          const body = await readBodyText(req, adminMaxBodyBytes)
          const answer = await handlers.account({
            method: req.method ?? 'GET',
            url: req.url ?? '/',
            authorization: req.headers.authorization,
            body,
            headers: req.headers,
            clientAddress: clientAddressOf(req),
            secure: 'encrypted' in req.socket,
          })
          const text = answer.contentType ? String(answer.body) : JSON.stringify(answer.body)
          return sendAnswer(req, res, answer.status, text, options, answer.headers, answer.contentType)
        }
        case 'portal': {
          const { status, body, headers, contentType } = handlers.portal({
            method: req.method ?? 'GET',
            url: req.url ?? '/',
          })
          return sendAnswer(req, res, status, body, options, headers, contentType)
        }
        case 'dashboard': {
          if (!handlers.dashboard) throw new RouteNotFoundError()
          const body = await readBodyText(req, adminMaxBodyBytes)
          const {
            status,
            body: answer,
            headers,
            contentType,
          } = await handlers.dashboard({
            method: req.method ?? 'GET',
            url: req.url ?? '/',
            headers: req.headers,
            body,
            clientAddress: clientAddressOf(req),
            secure: 'encrypted' in req.socket,
          })
          return sendAnswer(req, res, status, answer, options, headers, contentType)
        }
        case 'gas': {
          if (handleCors(req, res, options.cors)) return
          if (req.method !== 'GET') throw new HttpMethodNotAllowedError('GET')
          const answer = await handlers.gas({
            pathKey: route.pathKey,
            chainId: route.chainId,
            endpoint: route.endpoint,
            authorization: req.headers.authorization,
            clientAddress: clientAddressOf(req),
            origin: req.headers.origin,
            userAgent: req.headers['user-agent'],
          })
          return sendAnswer(req, res, answer.status, JSON.stringify(answer.body), options, answer.headers)
        }
        case 'ws':
          throw new UpgradeRequiredError()
        case 'notFound':
          throw new RouteNotFoundError()
      }
    } catch (err) {
      sendError(res, err)
    }
  }

  return {
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, host, () => {
          server.off('error', reject)
          const address = server.address()
          resolve({ host, port: typeof address === 'object' && address ? address.port : port })
        })
      })
    },
    async close(graceMs) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeIdleConnections()
      if (inFlight > 0) {
        await Promise.race([
          new Promise<void>((resolve) => {
            drained = resolve
          }),
          new Promise((resolve) => setTimeout(resolve, graceMs).unref()),
        ])
      }
      server.closeAllConnections()
      await closed
    },
  }
}
