import { Buffer } from 'node:buffer'
import type { IncomingMessage } from 'node:http'
import { STATUS_CODES } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { Duplex } from 'node:stream'
import { type WebSocket, WebSocketServer } from 'ws'
import { RouteNotFoundError } from '../errors/httpErrors.ts'
import { ShuttingDownError } from '../errors/socketErrors.ts'
import { toHeaderList } from '../errors/toHeaderList.ts'
import { toCloseFrame, toWireError, type WireErrorAnswer } from '../errors/toWireError.ts'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import type { SocketSession, SocketUpgrade, SocketUpgradeRequest } from '../pipeline/handleSocketUpgrade.ts'
import { createClientAddressOf } from './createClientAddressOf.ts'
import { createSharesOf } from './createSharesOf.ts'
import { keyRequestOf } from './keyRequestOf.ts'
import { parseRoute } from './parseRoute.ts'

export type UpgradeHandler = (request: SocketUpgradeRequest) => Promise<SocketUpgrade>

export type WebSocketOptions = {
  maxFrameBytes: number
  pingMs: number
  /** Proxies whose X-Forwarded-For names the client (createClientAddressOf). */
  trustedProxies: readonly string[]
  /** Client addresses that hold no share of their own of the bounds on bytes in flight (createSharesOf). */
  unsharedAddresses: readonly string[]
  /**
   * Told how long each JSON-RPC message took (from its arrival to its answer sent), with the network
   * the upgrade named (path or Host): /metrics' request durations.
   */
  onRpcMessage?:
    | ((networkName: string | undefined, host: string | undefined, tookMs: number) => void)
    | undefined
}

export type WebSockets = {
  /** An HTTP server's `upgrade` event: the request is upgraded, or refused with a JSON body. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void
  /** WebSocket connections open now. */
  connections(): number
  /**
   * The gateway stops: upgrades are refused, each connection answers the messages it has under way
   * (a new one is answered ShuttingDownError) and is closed with 1001; one still busy after
   * `graceMs` is closed then.
   */
  close(graceMs: number): Promise<void>
}

/**
 * The WebSocket adapter: upgrades on /ws/v3/{KEY} (and /{network}/ws/v3/{KEY}), frames in and out,
 * a ping every `pingMs` (a client that has not answered the last one is dropped), frames larger than
 * `maxFrameBytes` closed with 1009. Refused upgrades get a JSON body with their HTTP status. Made
 * before the HTTP server, which hands it its upgrades (`handleUpgrade`, createHttpServer's `upgrade`).
 */
export function createWebSockets(upgrade: UpgradeHandler, options: WebSocketOptions): WebSockets {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxFrameBytes,
    perMessageDeflate: false,
  })
  const { onRpcMessage } = options
  const alive = new WeakMap<WebSocket, boolean>()
  const clientAddressOf = createClientAddressOf(options.trustedProxies)
  const sharesOf = createSharesOf(options.unsharedAddresses)
  const sessions = new Map<WebSocket, SocketSession>()
  /** Set once close() began: the connections it waits for to send their close frame. */
  let stopping: { waiting: Set<WebSocket>; done(): void } | undefined
  const ended = (ws: WebSocket) => {
    if (stopping?.waiting.delete(ws) && stopping.waiting.size === 0) stopping.done()
  }

  function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy())
    if (stopping) {
      refuse(socket, toWireError(new ShuttingDownError(), 'jsonrpc'))
      return
    }
    const route = parseRoute(req.url ?? '/')
    if (route.kind !== 'ws') {
      refuse(socket, toWireError(new RouteNotFoundError(), 'jsonrpc'))
      return
    }
    upgrade(keyRequestOf(req, route, clientAddressOf(req), sharesOf)).then(
      (answer) => {
        if (!answer.ok) {
          reject(socket, answer.status, answer.body, answer.headers)
          return
        }
        wss.handleUpgrade(req, socket, head, (ws) => {
          alive.set(ws, true)
          ws.on('pong', () => alive.set(ws, true))
          const session = answer.open({
            send: (payload, sent) => sendMessage(ws, payload, sent),
            close: (code, reason) => {
              ws.close(code, reason)
              ended(ws)
            },
            bufferedBytes: () => ws.bufferedAmount,
          })
          sessions.set(ws, session)
          ws.on('message', (data) => {
            const receivedMs = performance.now()
            void session.message(data.toString()).then(() => {
              onRpcMessage?.(route.networkName, req.headers.host, performance.now() - receivedMs)
            })
          })
          ws.on('close', () => {
            sessions.delete(ws)
            session.close()
            ended(ws)
          })
          ws.on('error', () => ws.terminate())
          // opened while the gateway began stopping
          if (stopping) session.leave(new ShuttingDownError())
        })
      },
      (err: unknown) => refuse(socket, toWireError(err, 'jsonrpc')),
    )
  }

  const timer = setInterval(() => {
    for (const ws of wss.clients) {
      if (alive.get(ws) === false) {
        ws.terminate()
        continue
      }
      alive.set(ws, false)
      ws.ping()
    }
  }, options.pingMs)
  timer.unref()

  return {
    handleUpgrade,
    connections: () => wss.clients.size,
    async close(graceMs) {
      clearInterval(timer)
      let cap: NodeJS.Timeout | undefined
      await new Promise<void>((resolve) => {
        stopping = { waiting: new Set(sessions.keys()), done: resolve }
        if (sessions.size === 0) return resolve()
        cap = setTimeout(resolve, graceMs)
        for (const session of sessions.values()) session.leave(new ShuttingDownError())
      })
      clearTimeout(cap)
      // the ones whose calls outlasted the grace (and upgrades that were not handled yet)
      const { code, reason } = toCloseFrame(new ShuttingDownError())
      for (const ws of wss.clients) ws.close(code, reason)
      wss.close()
    },
  }
}

/**
 * One JSON-RPC message, as text (relayed node bytes too). An answer in parts (a batch's, a kept
 * result's) goes out as the frames of one message, never joined whole: a batch's answers may be
 * large, and joining them would hold the event loop from every other client. `sent` is told once,
 * when the last frame is written (or cannot be).
 */
function sendMessage(
  ws: WebSocket,
  payload: string | Buffer | AnswerParts,
  sent?: (err?: Error) => void,
): void {
  if (!(payload instanceof AnswerParts)) {
    ws.send(payload, { binary: false }, sent)
    return
  }
  const frames = framesOf(payload.parts)
  frames.forEach((frame, index) => {
    const fin = index === frames.length - 1
    ws.send(frame, { binary: false, fin }, fin ? sent : undefined)
  })
}

/** Below this, a message's parts are joined into frames of about this size (a frame of "," would be 3 bytes of header). */
const frameBytes = 64 * 1024

/** A message's frames: its large parts as they are, each run of small ones joined. */
function framesOf(parts: readonly Buffer[]): Buffer[] {
  const frames: Buffer[] = []
  let run: Buffer[] = []
  let runBytes = 0
  const endRun = () => {
    if (run.length > 0) frames.push(run.length === 1 ? (run[0] as Buffer) : Buffer.concat(run, runBytes))
    run = []
    runBytes = 0
  }
  for (const part of parts) {
    if (runBytes + part.length > frameBytes) endRun()
    if (part.length >= frameBytes) frames.push(part)
    else {
      run.push(part)
      runBytes += part.length
    }
  }
  endRun()
  return frames
}

/** A refusal of the adapter's own (no route, a failed upgrade handler): the wire error of src/errors. */
function refuse(socket: Duplex, { httpStatus, body, headers }: WireErrorAnswer): void {
  reject(socket, httpStatus, JSON.stringify(body), toHeaderList(headers))
}

/** An upgrade answered with an HTTP error; `headers` as names and values one after the other. */
function reject(socket: Duplex, status: number, body: string, headers: readonly string[]): void {
  if (socket.destroyed) return
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\n`
  for (let index = 0; index + 1 < headers.length; index += 2)
    head += `${headers[index]}: ${headers[index + 1]}\r\n`
  socket.end(`${head}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`)
}
