import { createHash, timingSafeEqual } from 'node:crypto'
import { z } from 'zod'
import { toAccountSummary, toAccountView } from '../accounts/accountView.ts'
import type { AccountAdmin } from '../accounts/createAccountAdmin.ts'
import { answerAlerts } from '../alerts/answerAlerts.ts'
import type { AlertAdmin } from '../alerts/createAlertAdmin.ts'
import type { AuthFailureLimiter } from '../auth/createAuthFailureLimiter.ts'
import type { KeyAdmin } from '../auth/keyAdmin.ts'
import { toKeyView } from '../auth/keyView.ts'
import { allowlistKindList, toAllowlistKind } from '../auth/toAllowlistKind.ts'
import { planNames } from '../config/planNames.ts'
import {
  AdminRequestError,
  AdminTokenRequiredError,
  NoAccountError,
  UnknownAllowlistKindError,
} from '../errors/adminErrors.ts'
import { RouteNotFoundError } from '../errors/httpErrors.ts'
import { AuthRateLimitError } from '../errors/limitErrors.ts'
import { toWireError } from '../errors/toWireError.ts'
import { utcDay, utcHour } from '../metering/clock.ts'
import { parseWholeNumber } from '../metering/parseWholeNumber.ts'
import { usageDays, usageHours } from '../metering/usageBounds.ts'
import type { UsageStore } from '../metering/usageStore.ts'
import type { RequestLogReader } from '../requestLog/readRequestLog.ts'
import type { AdminRequest, AdminResponse } from './adminApiTypes.ts'
import { answerAdminRequests } from './adminRequestLog.ts'
import { adminTokenKeyId } from './createAdminTokenFailures.ts'

export type AdminDeps = {
  /** The bearer token; undefined turns the admin API off (404). */
  token: string | undefined
  admin: KeyAdmin
  accounts: AccountAdmin
  /** Usage alert settings and deliveries, per account. */
  alerts: AlertAdmin
  usage: UsageStore
  networks: readonly string[]
  /** Pending usage is written before usage is read, so answers include the latest calls. */
  flushUsage: () => Promise<void>
  now: () => number
  /** Wrong tokens per client address, shared with the dashboard's sign-in (createAdminTokenFailures). */
  tokenFailures: AuthFailureLimiter
  requestLog: RequestLogReader
}

const createBody = z.strictObject({
  plan: z.enum(planNames).optional(),
  name: z.string().optional(),
  account: z.string().min(1).optional(),
  dailyCredits: z.int().positive().optional(),
  creditsPerSecond: z.int().positive().optional(),
  secret: z.boolean().optional(),
  failover: z.boolean().optional(),
})

const patchBody = z.strictObject({
  dailyCredits: z.int().min(0).optional(),
  creditsPerSecond: z.int().min(0).optional(),
  failover: z.boolean().optional(),
  requireSecret: z.boolean().optional(),
  requireJwt: z.boolean().optional(),
  jwtAudience: z.string().min(1).nullable().optional(),
  routeHeader: z.enum(['off', 'on', 'asked']).optional(),
  networks: z.array(z.string()).optional(),
})

const entriesBody = z.strictObject({ entries: z.array(z.string()).min(1) })
const jwtKeyBody = z.strictObject({ kid: z.string().min(1), publicKey: z.string().min(1) })

/**
 * The admin API under /admin: the CLI's key, usage and plan operations over HTTP, guarded by a bearer
 * token compared in constant time. Answers are plain JSON; errors are `{"error":{"message"}}`.
 */
export async function handleAdmin(deps: AdminDeps, request: AdminRequest): Promise<AdminResponse> {
  try {
    if (deps.token === undefined) throw new RouteNotFoundError()
    // an address that sent too many wrong tokens is refused before its token is looked at
    const waitMs = deps.tokenFailures.retryAfterMs(adminTokenKeyId, request.clientAddress)
    if (waitMs > 0) throw new AuthRateLimitError(waitMs)
    if (!tokenMatches(deps.token, request.authorization)) {
      if (request.authorization !== undefined)
        deps.tokenFailures.recordFailure(adminTokenKeyId, request.clientAddress)
      throw new AdminTokenRequiredError()
    }
    return await route(deps, request)
  } catch (err) {
    const answer = toWireError(err instanceof z.ZodError ? toRequestError(err) : err, 'admin')
    return { status: answer.httpStatus, body: answer.body, headers: answer.headers }
  }
}

/** A body that is JSON but not what the operation takes: each issue with where it is. */
function toRequestError(err: z.ZodError): AdminRequestError {
  const issues = err.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`)
  return new AdminRequestError(issues.join('; '))
}

async function route(deps: AdminDeps, request: AdminRequest): Promise<AdminResponse> {
  const url = new URL(request.url, 'http://admin')
  const parts = url.pathname.split('/').filter(Boolean).slice(1)
  const { admin } = deps
  const [resource, key, sub, subId] = parts
  const method = request.method

  if (resource === 'plans' && parts.length === 1 && method === 'GET') return ok(admin.plans)
  if (resource === 'usage' && parts.length === 1 && method === 'GET')
    return ok(await usage(deps, url.searchParams))
  if (resource === 'requests' && method === 'GET') return answerAdminRequests(deps, parts, url.searchParams)
  if (resource === 'accounts' && parts[2] === 'alerts' && parts[1] !== undefined) {
    const body = await answerAlerts(deps.alerts, decodeName(parts[1]), {
      method,
      rest: parts.slice(3),
      body: request.body,
      query: url.searchParams,
    })
    return ok(body)
  }
  if (resource === 'accounts') return routeAccounts(deps.accounts, method, parts.slice(1))
  if (resource !== 'keys') throw new RouteNotFoundError()

  if (key === undefined) {
    if (method === 'GET') return ok((await admin.list()).map(toKeyView))
    if (method === 'POST') {
      const { key: created, secret } = await admin.create(definedOnly(createBody.parse(json(request.body))))
      return { status: 201, body: { ...toKeyView(created), ...(secret ? { secret } : {}) } }
    }
  } else if (sub === undefined) {
    if (method === 'GET') return ok(toKeyView(await admin.show(key)))
    if (method === 'DELETE') {
      await admin.revoke(key)
      return ok({ key, status: 'revoked' })
    }
    if (method === 'PATCH')
      return ok(toKeyView(await patchKey(deps, key, patchBody.parse(json(request.body)))))
  } else if (sub === 'rotate-secret' && method === 'POST') {
    const { secret } = await admin.rotateSecret(key)
    return ok({ key, secret })
  } else if (sub === 'allowlists') {
    if (subId === undefined && method === 'GET') return ok((await admin.show(key)).settings.allowlists)
    const kind = subId === undefined ? undefined : toAllowlistKind(subId)
    if (!kind) throw new UnknownAllowlistKindError(subId, allowlistKindList)
    if (method === 'POST' || method === 'DELETE') {
      const { entries } = entriesBody.parse(json(request.body))
      const changed =
        method === 'POST'
          ? await admin.addAllowlistEntries(key, kind, entries)
          : await admin.removeAllowlistEntries(key, kind, entries)
      return ok(changed.settings.allowlists)
    }
  } else if (sub === 'jwt-keys') {
    if (subId === undefined && method === 'POST') {
      const { kid, publicKey } = jwtKeyBody.parse(json(request.body))
      return ok(toKeyView(await admin.addJwtKey(key, kid, publicKey)).jwt)
    }
    if (subId !== undefined && method === 'DELETE')
      return ok(toKeyView(await admin.removeJwtKey(key, subId)).jwt)
  }
  throw new RouteNotFoundError()
}

/** /admin/accounts, /admin/accounts/NAME and its token (made: shown once; DELETE: revoked). */
async function routeAccounts(
  accounts: AccountAdmin,
  method: string,
  parts: string[],
): Promise<AdminResponse> {
  const [encoded, sub] = parts
  const name = encoded === undefined ? undefined : decodeName(encoded)
  if (name === undefined && method === 'GET') return ok((await accounts.list()).map(toAccountSummary))
  if (name !== undefined && parts.length === 1 && method === 'GET')
    return ok(toAccountView(await accounts.show(name)))
  if (name !== undefined && sub === 'token' && parts.length === 2) {
    if (method === 'POST') return { status: 201, body: { token: await accounts.makeToken(name) } }
    if (method === 'DELETE') return ok({ account: name, revoked: await accounts.revokeToken(name) })
  }
  throw new RouteNotFoundError()
}

/** An account name from a path (`acme%20labs`); one that is not percent-encoded text names no account. */
function decodeName(encoded: string): string {
  try {
    return decodeURIComponent(encoded)
  } catch {
    throw new NoAccountError()
  }
}

async function patchKey(deps: AdminDeps, key: string, patch: z.infer<typeof patchBody>) {
  const { admin } = deps
  const { dailyCredits, creditsPerSecond, failover, requireSecret, requireJwt, jwtAudience, routeHeader } =
    patch
  if (dailyCredits !== undefined || creditsPerSecond !== undefined || failover !== undefined) {
    await admin.setLimits(key, definedOnly({ dailyCredits, creditsPerSecond, failover }))
  }
  const security = { requireSecret, requireJwt, jwtAudience, routeHeader }
  if (Object.values(security).some((value) => value !== undefined)) {
    await admin.setSecurity(key, definedOnly(security))
  }
  if (patch.networks !== undefined) await admin.setNetworks(key, patch.networks, deps.networks)
  return admin.show(key)
}

/**
 * Usage per day (`?days=N`, 7 by default) or, with `?hours=N`, per hour, by key, network and method:
 * the same rows `tollgate usage` prints, read from the same store.
 */
async function usage(deps: AdminDeps, query: URLSearchParams) {
  // checked before anything is read or written
  const hoursParam = query.get('hours')
  const days = parseWholeNumber('days', query.get('days'), usageDays)
  const hours = parseWholeNumber('hours', hoursParam, usageHours)
  await deps.flushUsage()
  const keyParam = query.get('key')
  const keyId = keyParam === null ? undefined : (await deps.admin.show(keyParam)).id
  const keys = new Map((await deps.admin.list()).map((key) => [key.id, key.key]))
  const byKey = keyId === undefined ? {} : { keyId }
  const rows =
    hoursParam === null
      ? await deps.usage.queryUsage({ fromDay: utcDay(deps.now() - (days - 1) * 86_400_000), ...byKey })
      : await deps.usage.queryHourlyUsage({
          fromHour: utcHour(deps.now() - (hours - 1) * 3_600_000),
          ...byKey,
        })
  return rows.map(({ keyId: id, ...row }) => ({ ...row, key: keys.get(id) ?? String(id) }))
}

function ok(body: unknown): AdminResponse {
  return { status: 200, body }
}

function json(body: string): unknown {
  if (body.trim() === '') return {}
  try {
    return JSON.parse(body)
  } catch {
    throw new AdminRequestError('the body is not JSON')
  }
}

/** Drops undefined members, for options typed with exactOptionalPropertyTypes. */
function definedOnly<T extends Record<string, unknown>>(
  value: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>
  }
}

function tokenMatches(token: string, authorization: string | undefined): boolean {
  if (authorization === undefined || !authorization.toLowerCase().startsWith('bearer ')) return false
  const digest = (value: string) => createHash('sha256').update(value).digest()
  return timingSafeEqual(digest(authorization.slice(7).trim()), digest(token))
}
