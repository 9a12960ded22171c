import type { AuthFailureLimiter } from '../auth/createAuthFailureLimiter.ts'
import type { FeeIndexer } from '../gas/createFeeIndexer.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { AdminRequest, AdminResponse } from './adminApiTypes.ts'
import { createDashboardSessions } from './createDashboardSessions.ts'
import type { DashboardStats } from './createDashboardStats.ts'
import { type DashboardRequest, handleDashboard } from './handleDashboard.ts'
import type { DashboardAssets } from './loadDashboardAssets.ts'
import type { WebAnswer } from './webAnswers.ts'

export type DashboardOptions = {
  token: string
  admin: (request: AdminRequest) => Promise<AdminResponse>
  stats: DashboardStats
  /** The networks now (a reload may change them). */
  networks: () => readonly Network[]
  indexers: ReadonlyMap<number, FeeIndexer>
  now: () => number
  /** Wrong admin tokens per client address, shared with /admin (createAdminTokenFailures). */
  tokenFailures: AuthFailureLimiter
  /** The built web app (loadDashboardAssets), which the key holders' portal serves too. */
  assets: DashboardAssets | undefined
}

/** How long a sign-in lasts. */
const sessionTtlMs = 12 * 3_600_000

/** The /dashboard handler: its sessions and sign-in limiter made once, the built pages given. */
export function createDashboard(
  options: DashboardOptions,
): (request: DashboardRequest) => Promise<WebAnswer> {
  const { stats, networks } = options
  stats.follow(networks)
  const deps = {
    admin: options.admin,
    token: options.token,
    sessions: createDashboardSessions({ token: options.token, ttlMs: sessionTtlMs, now: options.now }),
    signInFailures: options.tokenFailures,
    overview: () => stats.snapshot(networks()),
    indexers: options.indexers,
    assets: options.assets,
  }
  return (request) => handleDashboard(deps, request)
}
