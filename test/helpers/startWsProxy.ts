import { type AddressInfo, WebSocket, WebSocketServer } from 'ws'

export type WsProxy = {
  url: string
  /** JSON-RPC messages the gateway sent upstream, parsed. */
  sent: { method?: string; params?: unknown[] }[]
  /** Open proxied connections. */
  connectionCount(): number
  /** Drops every connection and refuses new ones for `pauseMs`. */
  cut(pauseMs: number): void
  close(): Promise<void>
}

/** A WebSocket proxy in front of a real node, to count what the gateway asks for and to cut it off. */
export async function startWsProxy(target: string): Promise<WsProxy> {
  const sent: WsProxy['sent'] = []
  let refuseUntil = 0
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  const pairs = new Set<[WebSocket, WebSocket]>()
  server.on('connection', (client) => {
    if (Date.now() < refuseUntil) {
      client.terminate()
      return
    }
    const upstream = new WebSocket(target)
    const pair: [WebSocket, WebSocket] = [client, upstream]
    pairs.add(pair)
    const queued: string[] = []
    upstream.on('open', () => {
      for (const message of queued.splice(0)) upstream.send(message)
    })
    client.on('message', (data) => {
      const text = data.toString()
      try {
        const parsed = JSON.parse(text)
        for (const message of Array.isArray(parsed) ? parsed : [parsed]) sent.push(message)
      } catch {
        // not JSON: forwarded as it is
      }
      if (upstream.readyState === WebSocket.OPEN) upstream.send(text)
      else queued.push(text)
    })
    upstream.on('message', (data) => {
      if (client.readyState === WebSocket.OPEN) client.send(data.toString())
    })
    const drop = () => {
      pairs.delete(pair)
      client.terminate()
      upstream.terminate()
    }
    client.on('close', drop)
    upstream.on('close', drop)
    client.on('error', drop)
    upstream.on('error', drop)
  })
  await new Promise<void>((resolve) => server.on('listening', () => resolve()))
  const { port } = server.address() as AddressInfo
  return {
    url: `ws://127.0.0.1:${port}`,
    sent,
    connectionCount: () => pairs.size,
    cut(pauseMs) {
      refuseUntil = Date.now() + pauseMs
      for (const [client, upstream] of pairs) {
        client.terminate()
        upstream.terminate()
      }
      pairs.clear()
    },
    async close() {
      for (const [client, upstream] of pairs) {
        client.terminate()
        upstream.terminate()
      }
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
