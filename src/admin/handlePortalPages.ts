import { DashboardNotBuiltError } from '../errors/adminErrors.ts'
import { HttpMethodNotAllowedError, RouteNotFoundError } from '../errors/httpErrors.ts'
import { toWireError } from '../errors/toWireError.ts'
import { type DashboardResponse, securityHeaders } from './handleDashboard.ts'
import type { DashboardAssets } from './loadDashboardAssets.ts'

/** A request for one of the portal's pages: only its method and address matter. */
export type PortalPageRequest = { method: string; url: string }

/**
 * The key holders' portal: its page at /account (and /account/) and its hashed assets under
 * /account/assets/, from the same build as the dashboard, with the dashboard's security headers
 * (scripts and styles from here only, no framing). The page signs in through /account/api/session;
 * nothing here needs a session, as nothing here is the account's.
 */
export function handlePortalPages(
  assets: DashboardAssets | undefined,
  request: PortalPageRequest,
): DashboardResponse {
  try {
    if (request.method !== 'GET' && request.method !== 'HEAD') throw new HttpMethodNotAllowedError('GET')
    const path = new URL(request.url, 'http://account').pathname
    if (path === '/account' || path === '/account/') {
      if (!assets?.portal) throw new DashboardNotBuiltError()
      return {
        status: 200,
        contentType: 'text/html; charset=utf-8',
        body: assets.portal,
        headers: { ...securityHeaders, 'cache-control': 'no-cache' },
      }
    }
    const asset = path.startsWith('/account/assets/')
      ? assets?.assets.get(path.slice('/account/assets/'.length))
      : undefined
    if (!asset) throw new RouteNotFoundError()
    return {
      status: 200,
      contentType: asset.contentType,
      body: asset.body,
      headers: { ...securityHeaders, 'cache-control': 'public, max-age=31536000, immutable' },
    }
  } catch (err) {
    const { httpStatus, body, headers } = toWireError(err, 'admin')
    return {
      status: httpStatus,
      contentType: 'application/json',
      body: JSON.stringify(body),
      headers: { ...securityHeaders, 'cache-control': 'no-store', ...headers },
    }
  }
}
