import type { DashboardStats } from '../admin/createDashboardStats.ts'
import { createNetworkNamer } from '../admin/createNetworkNamer.ts'
import type { RequestDurations } from '../metrics/RequestDurations.ts'
import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import type { HttpServerOptions } from '../server/createHttpServer.ts'
import type { WebSocketOptions } from '../server/createWebSockets.ts'

export type AnswerTaps = Pick<HttpServerOptions, 'onRpcAnswer'> & Pick<WebSocketOptions, 'onRpcMessage'>

/**
 * What the HTTP and WebSocket adapters tell of each JSON-RPC answer, counted by network where it is
 * read: the dashboard's answers by status (when it is on), /metrics' request durations (when metrics
 * are on). The network is named as the registry resolves it, remembered per path name and Host rather
 * than parsed each time. A tap nobody reads is left out: the adapter then does nothing per answer.
 */
export function createAnswerTaps(
  networks: NetworkRegistry,
  dashboard: DashboardStats | undefined,
  durations: RequestDurations | undefined,
): AnswerTaps {
  const nameNetwork = createNetworkNamer(networks)
  return {
    onRpcAnswer:
      dashboard || durations
        ? (networkName, host, status, tookMs) => {
            const name = nameNetwork(networkName, host)
            dashboard?.noteAnswer(name, status)
            durations?.observe(name, 'http', tookMs)
          }
        : undefined,
    onRpcMessage:
      durations &&
      ((networkName, host, tookMs) => durations.observe(nameNetwork(networkName, host), 'ws', tookMs)),
  }
}
