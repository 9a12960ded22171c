import type { IncomingMessage, Server } from 'node:http'
import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import { type WebSocket, WebSocketServer } from 'ws'
import type { SocketUpgrade, SocketUpgradeRequest } from '../pipeline/handleSocketUpgrade.ts'
import { keyRequestOf } from './keyRequestOf.ts'
import { parseRoute } from './parseRoute.ts'

export type UpgradeHandler = (request: SocketUpgradeRequest) => Promise<SocketUpgrade>

export type WebSocketOptions = { maxFrameBytes: number; pingMs: number }

export type WebSockets = { close(): void }

/**
 * The WebSocket adapter: upgrades on /ws/v3/{KEY} (and /{network}/ws/v3/{KEY}), frames in and out,
 * a ping every `pingMs` (a client that has not answered the last one is dropped), frames larger than
 * `maxFrameBytes` closed with 1009. Refused upgrades get a JSON body with their HTTP status.
 */
export function attachWebSockets(
  server: Server,
  upgrade: UpgradeHandler,
  options: WebSocketOptions,
): WebSockets {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxFrameBytes,
    perMessageDeflate: false,
  })
  const alive = new WeakMap<WebSocket, boolean>()

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy())
    const route = parseRoute(req.url ?? '/')
    if (route.kind !== 'ws') {
      reject(socket, 404, '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"not found"}}')
      return
    }
    upgrade(keyRequestOf(req, route)).then(
      (answer) => {
        if (!answer.ok) {
          reject(socket, answer.status, answer.body)
          return
        }
        wss.handleUpgrade(req, socket, head, (ws) => {
          alive.set(ws, true)
          ws.on('pong', () => alive.set(ws, true))
          const session = answer.open({
            send: (payload) => ws.send(payload),
            close: (code, reason) => ws.close(code, reason),
            bufferedBytes: () => ws.bufferedAmount,
          })
          ws.on('message', (data) => {
            void session.message(data.toString())
          })
          ws.on('close', () => session.close())
          ws.on('error', () => ws.terminate())
        })
      },
      () =>
        reject(socket, 500, '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}'),
    )
  })

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
    close() {
      clearInterval(timer)
      for (const ws of wss.clients) ws.close(1001, 'server shutting down')
      wss.close()
    },
  }
}

function reject(socket: Duplex, status: number, body: string): void {
  if (socket.destroyed) return
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  )
}
