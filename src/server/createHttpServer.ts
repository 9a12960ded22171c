import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AdminRequest, AdminResponse } from '../admin/handleAdmin.ts'
import {
  HttpMethodNotAllowedError,
  RouteNotFoundError,
  TollgateError,
  UnsupportedContentTypeError,
  UpgradeRequiredError,
} from '../errors/errors.ts'
import { toJsonRpcError } from '../errors/toJsonRpcError.ts'
import { Cancellation } from '../failsafe/Cancellation.ts'
import type { GasRequest, GasResponse } from '../gas/handleGasRequest.ts'
import { serializeError } from '../jsonrpc/serialize.ts'
import type { RpcAnswerCounts } from '../metrics/createMetrics.ts'
import type { MetricsRequest, MetricsResponse } from '../metrics/handleMetrics.ts'
import type { HttpRpcRequest, HttpRpcResponse } from '../pipeline/handleHttpRpc.ts'
import { keyRequestOf } from './keyRequestOf.ts'
import { parseRoute } from './parseRoute.ts'
import { readBody } from './readBody.ts'

export type HttpHandlers = {
  rpc(request: HttpRpcRequest): Promise<HttpRpcResponse>
  ready(): { ok: boolean; body: unknown }
  /** Undefined when metrics are off: /metrics is then not found. */
  metrics: ((request: MetricsRequest) => Promise<MetricsResponse>) | undefined
  gas(request: GasRequest): Promise<GasResponse>
  admin(request: AdminRequest): Promise<AdminResponse>
}

export type HttpServerOptions = {
  maxBodyBytes: number
  keepAliveTimeoutMs: number
  /** Where JSON-RPC answers are counted by status class (a plain increment each), when metrics are on. */
  rpcAnswers?: RpcAnswerCounts | undefined
}

export type HttpServer = {
  server: Server
  listen(port: number, host: string): Promise<{ port: number; host: string }>
  /** Stops accepting, lets in-flight requests finish for up to `graceMs`, then closes every connection. */
  close(graceMs: number): Promise<void>
}

const acceptedContentTypes = new Set(['application/json', 'application/json-rpc', 'application/jsonrequest'])
const jsonHeaders = { 'content-type': 'application/json' }
const adminMaxBodyBytes = 1024 * 1024

/** The HTTP adapter: bytes in, bytes out. Routing, limits and headers; everything else is the handlers'. */
export function createHttpServer(handlers: HttpHandlers, options: HttpServerOptions): HttpServer {
  const { rpcAnswers } = options
  let inFlight = 0
  let drained: (() => void) | undefined

  const server = createServer({ keepAliveTimeout: options.keepAliveTimeoutMs }, (req, res) => {
    inFlight++
    const cancellation = new Cancellation()
    res.once('close', () => {
      inFlight--
      if (!res.writableFinished) cancellation.cancel()
      if (inFlight === 0) drained?.()
    })
    handle(req, res, cancellation).catch((err) => sendError(res, err))
  })

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    cancellation: Cancellation,
  ): Promise<void> {
    const route = parseRoute(req.url ?? '/')
    switch (route.kind) {
      case 'healthz':
        return send(res, 200, JSON.stringify({ status: 'ok' }))
      case 'readyz': {
        const { ok, body } = handlers.ready()
        return send(res, ok ? 200 : 503, JSON.stringify(body))
      }
      case 'metrics': {
        if (!handlers.metrics) throw new RouteNotFoundError()
        if (req.method !== 'GET') throw new HttpMethodNotAllowedError('GET')
        const answer = await handlers.metrics({ authorization: req.headers.authorization })
        if (res.destroyed) return
        res.writeHead(answer.status, { ...answer.headers, 'content-type': answer.contentType })
        res.end(answer.body)
        return
      }
      case 'admin': {
        const body = await readBody(req, adminMaxBodyBytes)
        const answer = await handlers.admin({
          method: req.method ?? 'GET',
          url: req.url ?? '/',
          authorization: req.headers.authorization,
          body,
        })
        return send(res, answer.status, JSON.stringify(answer.body))
      }
      case 'gas': {
        if (req.method !== 'GET') throw new HttpMethodNotAllowedError('GET')
        const answer = await handlers.gas({
          pathKey: route.pathKey,
          chainId: route.chainId,
          endpoint: route.endpoint,
          authorization: req.headers.authorization,
          origin: req.headers.origin,
          userAgent: req.headers['user-agent'],
        })
        return send(res, answer.status, JSON.stringify(answer.body), answer.headers)
      }
      case 'ws':
        throw new UpgradeRequiredError()
      case 'notFound':
        throw new RouteNotFoundError()
      case 'rpc': {
        if (req.method !== 'POST') {
          if (rpcAnswers) rpcAnswers['4xx']++
          throw new HttpMethodNotAllowedError('POST')
        }
        let body: string | TollgateError
        try {
          if (!isJsonContentType(req.headers['content-type'])) throw new UnsupportedContentTypeError()
          body = await readBody(req, options.maxBodyBytes)
        } catch (err) {
          if (!(err instanceof TollgateError)) throw err
          // a refused body may still be arriving: do not keep a connection whose stream position is unknown
          res.setHeader('connection', 'close')
          body = err
        }
        const answer = await handlers.rpc({ ...keyRequestOf(req, route), body, cancellation })
        if (rpcAnswers) {
          if (answer.status >= 500) rpcAnswers['5xx']++
          else if (answer.status >= 400) rpcAnswers['4xx']++
          else rpcAnswers['2xx']++
        }
        return send(res, answer.status, answer.body, answer.headers)
      }
    }
  }

  return {
    server,
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

function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false
  const semicolon = header.indexOf(';')
  const type = (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase()
  return acceptedContentTypes.has(type)
}

function send(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  headers?: Record<string, string>,
): void {
  if (res.destroyed) return
  if (headers === undefined) {
    res.writeHead(status, jsonHeaders)
  } else {
    // a flat [name, value, ...] list: no merged object, no per-header bookkeeping
    const raw: string[] = ['content-type', 'application/json']
    for (const name in headers) raw.push(name, headers[name] as string)
    res.writeHead(status, raw)
  }
  res.end(body)
}

function sendError(res: ServerResponse, err: unknown): void {
  const { httpStatus, error } = toJsonRpcError(err)
  if (res.headersSent) {
    res.destroy()
    return
  }
  send(res, httpStatus, serializeError(null, error))
}
