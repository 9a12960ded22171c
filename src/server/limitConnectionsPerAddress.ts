import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { toAddressGroup } from '../auth/toAddressGroup.ts'

/**
 * Counts open connections (HTTP and WebSocket alike) per remote address and closes, at once and
 * unanswered, one past `limit`: one client cannot take every connection the process has.
 */
export function limitConnectionsPerAddress(server: Server, limit: number, exempt: readonly string[]): void {
  const open = new Map<string, number>()
  const unlimited = new Set(exempt.map(toAddressGroup))
  server.on('connection', (socket: Socket) => {
    if (socket.remoteAddress === undefined) return
    const address = toAddressGroup(socket.remoteAddress)
    if (unlimited.has(address)) return
    const count = open.get(address) ?? 0
    if (count >= limit) {
      socket.destroy()
      return
    }
    open.set(address, count + 1)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      if (left === 0) open.delete(address)
      else open.set(address, left)
    })
  })
}
