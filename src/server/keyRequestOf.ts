import type { IncomingMessage } from 'node:http'
import type { KeyRequest } from '../pipeline/authorizeKeyRequest.ts'
import type { SharesOf } from './createSharesOf.ts'

/**
 * What a keyed request (a JSON-RPC POST or a WebSocket upgrade) says of itself: its route, its
 * headers, the address it comes from (createClientAddressOf), and so the shares of bytes in flight
 * it counts against (createSharesOf).
 */
export function keyRequestOf(
  req: IncomingMessage,
  route: { key: string; networkName: string | undefined },
  clientAddress: string | undefined,
  sharesOf: SharesOf,
): KeyRequest {
  const { headers } = req
  const enableFailover = headers['enable-failover']
  return {
    key: route.key,
    networkName: route.networkName,
    host: headers.host,
    authorization: headers.authorization,
    clientAddress,
    shares: sharesOf(route.key, clientAddress),
    origin: headers.origin,
    userAgent: headers['user-agent'],
    enableFailover: Array.isArray(enableFailover) ? enableFailover[0] : enableFailover,
    headers,
  }
}
