import type { Logger } from 'pino'
import type { AccountApiRequest, AccountApiResponse } from '../accounts/accountApiTypes.ts'
import { createAccountAdmin } from '../accounts/createAccountAdmin.ts'
import { createAccountRequestRate } from '../accounts/createAccountRequestRate.ts'
import { accountSessionMacKey, createAccountSessions } from '../accounts/createAccountSessions.ts'
import { createOidcSignIn } from '../accounts/createOidcSignIn.ts'
import { handleAccountApi } from '../accounts/handleAccountApi.ts'
import type { AdminRequest, AdminResponse } from '../admin/adminApiTypes.ts'
import { createAdminTokenFailures } from '../admin/createAdminTokenFailures.ts'
import { createDashboard } from '../admin/createDashboard.ts'
import type { DashboardStats } from '../admin/createDashboardStats.ts'
import { handleAdmin } from '../admin/handleAdmin.ts'
import type { DashboardRequest } from '../admin/handleDashboard.ts'
import { handlePortalPages, type PortalPageRequest } from '../admin/handlePortalPages.ts'
import { loadDashboardAssets } from '../admin/loadDashboardAssets.ts'
import type { WebAnswer } from '../admin/webAnswers.ts'
import { createAlertAdmin } from '../alerts/createAlertAdmin.ts'
import { createAuthFailureLimiter } from '../auth/createAuthFailureLimiter.ts'
import { createFilterIds } from '../auth/createFilterIds.ts'
import type { KeyRegistry } from '../auth/createKeyRegistry.ts'
import { createSecretVerifier } from '../auth/createSecretVerifier.ts'
import { getSecretHashKey } from '../auth/hashSecret.ts'
import type { KeyAdmin } from '../auth/keyAdmin.ts'
import type { Config } from '../config/configSchema.ts'
import { ByteBulkhead } from '../failsafe/ByteBulkhead.ts'
import { CallsInFlight } from '../metering/CallsInFlight.ts'
import type { Clock } from '../metering/clock.ts'
import type { Meter } from '../metering/meterTypes.ts'
import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import type { RequestTracing } from '../pipeline/RequestTrace.ts'
import type { RequestLog } from '../requestLog/createRequestLog.ts'
import type { RequestLogReader } from '../requestLog/readRequestLog.ts'
import { type AnswerMemory, createAnswerMemory, smallMessageBytes } from '../upstreams/AnswerBudget.ts'
import type { NetworkServices } from './createNetworkServices.ts'
import { createRequestSettings, type LiveRequestSettings } from './createRequestSettings.ts'
import type { Stores } from './stores.ts'

/** How long a portal sign-in lasts: a working day, as the dashboard's. */
const accountSessionTtlMs = 12 * 3_600_000

/** What answers requests, before any server takes one: it starts nothing, so it has nothing to stop. */
export type RequestHandling = {
  /** The request path's settings: a reload swaps them whole (createReloader). */
  settings: LiveRequestSettings
  admin(request: AdminRequest): Promise<AdminResponse>
  /** The account API (/account/api): key holders' scripts, signed in with their account's token. */
  account(request: AccountApiRequest): Promise<AccountApiResponse>
  /** The key holders' portal's page and assets (/account/). */
  portal(request: PortalPageRequest): WebAnswer
  /** Undefined when the dashboard is off (no admin token). */
  dashboard: ((request: DashboardRequest) => Promise<WebAnswer>) | undefined
  /** The bound on answers in flight for the process, over HTTP and WebSocket alike. */
  answers: AnswerMemory
  /** The bound on request bodies and WebSocket messages held at once, with each key's and address's share. */
  bodies: ByteBulkhead
}

export type RequestHandlingDeps = {
  stores: Pick<Stores, 'keys' | 'usage' | 'accounts' | 'requestLog' | 'alerts'>
  keys: KeyRegistry
  keyAdmin: KeyAdmin
  meter: Meter
  networks: NetworkRegistry
  services: Pick<NetworkServices, 'hubs' | 'indexers' | 'onRetired'>
  dashboardStats: DashboardStats
  tracing: RequestTracing | undefined
  /** The request log's writer; undefined when it is off (what it wrote is still read). */
  requestLog: RequestLog | undefined
  clock: Clock
  log: Logger
}

/**
 * The JSON-RPC, Gas API and WebSocket upgrade handlers' parts and settings (createRequestSettings),
 * the admin API and the dashboard, and the process's bounds on bytes in flight.
 */
export async function createRequestHandling(
  config: Config,
  deps: RequestHandlingDeps,
): Promise<RequestHandling> {
  const { stores, networks, meter, services, clock, log } = deps
  const now = () => clock.now()
  const secretHashKey = await getSecretHashKey(stores.keys)
  // wrong admin tokens, per client address: /admin and the dashboard's sign-in count together
  const tokenFailures = createAdminTokenFailures(now)
  const accounts = createAccountAdmin({
    keys: stores.keys,
    accounts: stores.accounts,
    usage: stores.usage,
    plans: () => deps.keyAdmin.plans,
    now,
  })
  const requestLog: RequestLogReader = {
    store: stores.requestLog,
    flush: async () => deps.requestLog?.flush(),
    days: config.requestLog.days,
    sampleRate: config.requestLog.sampleRate,
  }
  const alerts = createAlertAdmin({
    alerts: stores.alerts,
    accounts: stores.accounts,
    hashKey: async () => secretHashKey,
    now,
  })
  const adminDeps = {
    requestLog,
    token: config.admin.token,
    tokenFailures,
    admin: deps.keyAdmin,
    accounts,
    alerts,
    usage: stores.usage,
    get networks() {
      return networks.all.map((network) => network.name)
    },
    flushUsage: () => meter.flush(),
    now,
  }
  const admin = (request: AdminRequest) => handleAdmin(adminDeps, request)
  // wrong account tokens count per client address with the numbers wrong key secrets have, in a
  // count of their own (a script with a stale token must not lock its address out of its keys)
  const accountTokenFailures = (auth: Config['auth']) =>
    createAuthFailureLimiter({ burst: auth.failureBurst, perMinute: auth.failuresPerMinute, now })
  // sign-in through an identity provider: read once at start (a change of accounts.oidc needs a restart)
  const oidc =
    config.accounts.oidc === undefined
      ? undefined
      : createOidcSignIn(config.accounts.oidc, { secretHashKey, keys: stores.keys, now, log })
  const accountDeps = {
    requestLog,
    accounts,
    alerts,
    keyAdmin: deps.keyAdmin,
    usage: stores.usage,
    flushUsage: () => meter.flush(),
    now,
    tokenFailures: accountTokenFailures(config.auth),
    requestRate: createAccountRequestRate(now),
    sessions: createAccountSessions({
      macKey: accountSessionMacKey(secretHashKey),
      ttlMs: accountSessionTtlMs,
      now,
    }),
    oidc,
  }
  const account = (request: AccountApiRequest) => handleAccountApi(accountDeps, request)
  // the built web app, read once: the portal's pages and the dashboard's
  const webAssets = loadDashboardAssets()
  const portal = (request: PortalPageRequest) => handlePortalPages(webAssets, request)
  const dashboard =
    config.admin.token === undefined
      ? undefined
      : createDashboard({
          token: config.admin.token,
          admin,
          stats: deps.dashboardStats,
          networks: () => networks.all,
          indexers: services.indexers,
          now,
          tokenFailures,
          assets: webAssets,
        })
  const answers = createAnswerMemory({
    maxRequestBytes: config.server.maxAnswerBytes,
    maxBytes: config.server.maxAnswerBytesInFlight,
    shareBytes: config.server.maxAnswerBytesInFlightPerClient,
  })
  const bodies = new ByteBulkhead(
    config.server.maxBodyBytesInFlight,
    smallMessageBytes,
    config.server.maxBodyBytesInFlightPerClient,
  )
  // what the live keys set, read through one reference: a reload swaps in new settings whole
  const liveSettings = createRequestSettings(
    {
      rpc: {
        keys: deps.keys,
        networks,
        meter,
        filterIds: createFilterIds(secretHashKey),
        // counts that outlive a reload: a key's calls in flight are the same calls whatever its plan says
        callsInFlight: new CallsInFlight(),
        log,
        tracing: deps.tracing,
        requestLog: deps.requestLog,
        verifySecret: createSecretVerifier({
          hashKey: secretHashKey,
          store: stores.keys,
          onError: (err) => log.error({ err }, 'storing a secret hash in place of its scrypt hash failed'),
        }),
      },
      gas: { indexers: services.indexers },
      upgrade: { hubs: services.hubs, answers, bodies, onNetworkRetired: services.onRetired },
      now,
    },
    config,
  )
  const settings: LiveRequestSettings = {
    current: liveSettings.current,
    swap(next, authChanged) {
      liveSettings.swap(next, authChanged)
      // new numbers start a new count, as the key secrets' limiter's do
      if (authChanged) accountDeps.tokenFailures = accountTokenFailures(next.auth)
    },
  }
  return { settings, admin, account, portal, dashboard, answers, bodies }
}
