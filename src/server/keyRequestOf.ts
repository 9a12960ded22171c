import type { IncomingMessage } from 'node:http'
import type { KeyRequest } from '../pipeline/authorizeKeyRequest.ts'

/**
 * What a keyed request (a JSON-RPC POST or a WebSocket upgrade) says of itself: its route, its
 * headers, and the address it comes from (createClientAddressOf).
 */
export function keyRequestOf(
  req: IncomingMessage,
  route: { key: string; networkName: string | undefined },
  clientAddress: string | undefined,
): KeyRequest {
  const { headers } = req
  const enableFailover = headers['enable-failover']
  return {
    key: route.key,
    networkName: route.networkName,
    host: headers.host,
    authorization: headers.authorization,
    clientAddress,
    origin: headers.origin,
    userAgent: headers['user-agent'],
    enableFailover: Array.isArray(enableFailover) ? enableFailover[0] : enableFailover,
    headers,
  }
}
