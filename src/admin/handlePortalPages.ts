import { DashboardNotBuiltError } from '../errors/adminErrors.ts'
import { HttpMethodNotAllowedError, RouteNotFoundError } from '../errors/httpErrors.ts'
import type { DashboardAssets } from './loadDashboardAssets.ts'
import { assetAnswer, errorAnswer, pageAnswer, type WebAnswer } from './webAnswers.ts'

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
): WebAnswer {
  try {
    if (request.method !== 'GET' && request.method !== 'HEAD') throw new HttpMethodNotAllowedError('GET')
    const path = new URL(request.url, 'http://account').pathname
    if (path === '/account' || path === '/account/') {
      if (!assets?.portal) throw new DashboardNotBuiltError()
      return pageAnswer(assets.portal)
    }
    if (!path.startsWith('/account/assets/')) throw new RouteNotFoundError()
    return assetAnswer(assets?.assets.get(path.slice('/account/assets/'.length)))
  } catch (err) {
    return errorAnswer(err)
  }
}
