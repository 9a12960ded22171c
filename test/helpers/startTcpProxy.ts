import { connect, createServer, type Socket } from 'node:net'
import { toServerAddress, toUrlAtPort } from './testServers.ts'

export type TcpProxy = {
  port: number
  /** The server's URL through the proxy: the same user, database and DB index, the proxy's port. */
  url: string
  /** Drops every connection and refuses new ones, as a database that went down. */
  cut(): void
  /** Accepts connections again. */
  restore(): void
  /** Holds what the server sends from now on (a server that answers late), until `release`. */
  hold(): void
  /** Sends what was held, in order, and passes the server's bytes on again. */
  release(): void
  /** Bytes from the server held since `hold`: more than 0 once the server answered something. */
  heldBytes(): number
  close(): Promise<void>
}

/**
 * A TCP proxy to the server of `targetUrl` (a postgres:// or redis:// URL), to take a real server away
 * from a client and give it back.
 * With `subscriberDelayMs` (in front of Redis), what Redis sends a connection once it has subscribed
 * takes that much longer: pub/sub messages reach that client late, its commands' answers do not.
 */
export async function startTcpProxy(
  targetUrl: string,
  options: { subscriberDelayMs?: number } = {},
): Promise<TcpProxy> {
  const target = toServerAddress(targetUrl)
  let refusing = false
  let held: [Socket, Buffer][] | undefined
  let heldBytes = 0
  const sockets = new Set<Socket>()
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
  }
  const server = createServer((client) => {
    track(client)
    if (refusing) {
      client.destroy()
      return
    }
    const upstream = connect(target.port, target.host)
    track(upstream)
    const { subscriberDelayMs } = options
    if (subscriberDelayMs) {
      let subscribed = false
      client.on('data', (chunk: Buffer) => {
        if (chunk.toString('latin1').toLowerCase().includes('subscribe')) subscribed = true
        upstream.write(chunk)
      })
      // timers of one delay fire in the order they were set: the bytes keep their order
      upstream.on('data', (chunk: Buffer) => {
        if (!subscribed) client.write(chunk)
        else
          setTimeout(() => {
            if (!client.destroyed) client.write(chunk)
          }, subscriberDelayMs)
      })
    } else {
      client.pipe(upstream)
      upstream.on('data', (chunk: Buffer) => {
        if (held === undefined) client.write(chunk)
        else {
          held.push([client, chunk])
          heldBytes += chunk.length
        }
      })
    }
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port')
  return {
    port: address.port,
    url: toUrlAtPort(targetUrl, address.port),
    cut() {
      refusing = true
      for (const socket of sockets) socket.destroy()
    },
    restore() {
      refusing = false
    },
    hold() {
      held ??= []
    },
    release() {
      const chunks = held ?? []
      held = undefined
      heldBytes = 0
      for (const [client, chunk] of chunks) if (!client.destroyed) client.write(chunk)
    },
    heldBytes: () => heldBytes,
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
