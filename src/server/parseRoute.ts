/** What a request path asks for. Pure, so every path shape is tested without a socket. */
export type Route =
  | { kind: 'rpc'; key: string; networkName: string | undefined }
  | { kind: 'ws'; key: string; networkName: string | undefined }
  | { kind: 'healthz' }
  | { kind: 'readyz' }
  | { kind: 'metrics' }
  | { kind: 'admin' }
  | { kind: 'dashboard' }
  | { kind: 'account' }
  | { kind: 'portal' }
  | { kind: 'gas'; pathKey: string | undefined; chainId: string; endpoint: string }
  | { kind: 'notFound' }

/**
 * `/v3/{KEY}`, `/{network}/v3/{KEY}` (a trailing slash is fine), `/healthz`, `/readyz`, `/metrics`, `/admin/...`, `/dashboard/...`, `/account/api/...`, `/account/` (the portal),
 * and the gas API: `/networks/{chainId}/{endpoint}` and `/v3/{KEY}/networks/{chainId}/{endpoint}`.
 * `/v3` and `/v3/` are JSON-RPC routes with an empty key, answered 401.
 */
export function parseRoute(url: string): Route {
  const queryAt = url.indexOf('?')
  const path = queryAt === -1 ? url : url.slice(0, queryAt)
  // the common case first, without splitting: `/v3/{KEY}`
  if (path.startsWith('/v3/') && path.indexOf('/', 4) === -1) {
    return { kind: 'rpc', key: path.slice(4), networkName: undefined }
  }
  if (path === '/healthz') return { kind: 'healthz' }
  if (path === '/readyz') return { kind: 'readyz' }
  if (path === '/metrics') return { kind: 'metrics' }
  if (path === '/admin' || path.startsWith('/admin/')) return { kind: 'admin' }
  if (path === '/dashboard' || path.startsWith('/dashboard/')) return { kind: 'dashboard' }
  // not all of /account/: `/account/v3/{KEY}` is a network named `account`
  if (path === '/account/api' || path.startsWith('/account/api/')) return { kind: 'account' }
  if (path === '/account' || path === '/account/' || path.startsWith('/account/assets/'))
    return { kind: 'portal' }
  const parts = path.split('/')
  if (parts[parts.length - 1] === '' && parts.length > 2) parts.pop()
  if (parts[1] === 'networks' && parts.length === 4) {
    return { kind: 'gas', pathKey: undefined, chainId: parts[2] ?? '', endpoint: parts[3] ?? '' }
  }
  if (parts[1] === 'v3' && parts[3] === 'networks' && parts.length === 6 && parts[2] !== '') {
    return { kind: 'gas', pathKey: parts[2], chainId: parts[4] ?? '', endpoint: parts[5] ?? '' }
  }
  // parts[0] is '' (the path starts with '/')
  if (parts[1] === 'ws' && parts[2] === 'v3' && parts.length <= 4) {
    return { kind: 'ws', key: parts[3] ?? '', networkName: undefined }
  }
  if (parts[2] === 'ws' && parts[3] === 'v3' && parts.length <= 5 && parts[1] !== '') {
    return { kind: 'ws', key: parts[4] ?? '', networkName: parts[1] }
  }
  if (parts[1] === 'v3' && parts.length <= 3)
    return { kind: 'rpc', key: parts[2] ?? '', networkName: undefined }
  if (parts[2] === 'v3' && parts.length <= 4 && parts[1] !== '') {
    return { kind: 'rpc', key: parts[3] ?? '', networkName: parts[1] }
  }
  return { kind: 'notFound' }
}
