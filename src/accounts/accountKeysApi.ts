import { z } from 'zod'
import type { ApiKey } from '../auth/apiKey.ts'
import { toKeyView } from '../auth/keyView.ts'
import { allowlistKindList, toAllowlistKind } from '../auth/toAllowlistKind.ts'
import { AdminRequestError, NoActiveKeyError, UnknownAllowlistKindError } from '../errors/adminErrors.ts'
import { RouteNotFoundError } from '../errors/httpErrors.ts'
import { AccountAnswer } from './accountAnswer.ts'
import type { AccountCall } from './accountApiTypes.ts'

// the admin API's bodies (docs/admin.md), less what is the operator's to decide: the account and
// plan a key belongs to, failover, networks and route headers
const createBody = z.strictObject({
  name: z.string().optional(),
  dailyCredits: z.int().positive().optional(),
  creditsPerSecond: z.int().positive().optional(),
  secret: z.boolean().optional(),
})

const patchBody = z.strictObject({
  dailyCredits: z.int().min(0).optional(),
  creditsPerSecond: z.int().min(0).optional(),
  requireSecret: z.boolean().optional(),
  requireJwt: z.boolean().optional(),
  jwtAudience: z.string().min(1).nullable().optional(),
})

const entriesBody = z.strictObject({ entries: z.array(z.string()).min(1) })
const jwtKeyBody = z.strictObject({ kid: z.string().min(1), publicKey: z.string().min(1) })

/**
 * /account/api/keys: the signed-in account's keys, with the admin API's routes and answers below
 * /admin/keys (docs/admin.md), through the same key operations (KeyAdmin) and so the same rules. A
 * new key always joins the signed-in account (within its plan's keys per account); a key of
 * another account is answered 404, exactly as one that does not exist.
 */
export async function keysResource(call: AccountCall): Promise<unknown> {
  const { deps, account, request } = call
  const parts = call.url.pathname.split('/').filter(Boolean).slice(3)
  const [key, sub, subId, ...rest] = parts
  const { method } = request
  const admin = deps.keyAdmin
  if (rest.length > 0) throw new RouteNotFoundError()

  if (key === undefined) {
    if (method === 'GET')
      return { account: account.name, keys: (await deps.accounts.keysOf(account)).map(toKeyView) }
    if (method === 'POST') {
      const options = parse(createBody, request.body)
      const { key: created, secret } = await admin.create({ ...definedOnly(options), account: account.name })
      return new AccountAnswer(201, { ...toKeyView(created), ...(secret ? { secret } : {}) })
    }
    throw new RouteNotFoundError()
  }
  // the key must be this account's before anything is said about it
  const own = await ownKey(call, key)
  if (sub === undefined) {
    if (method === 'GET') return toKeyView(own)
    if (method === 'DELETE') {
      await admin.revoke(key)
      return { key, status: 'revoked' }
    }
    if (method === 'PATCH') return toKeyView(await patchKey(call, key, parse(patchBody, request.body)))
  } else if (sub === 'rotate-secret' && subId === undefined && method === 'POST') {
    const { secret } = await admin.rotateSecret(key)
    return { key, secret }
  } else if (sub === 'allowlists') {
    if (subId === undefined && method === 'GET') return own.settings.allowlists
    const kind = subId === undefined ? undefined : toAllowlistKind(subId)
    if (!kind) throw new UnknownAllowlistKindError(subId, allowlistKindList)
    if (method === 'POST' || method === 'DELETE') {
      const { entries } = parse(entriesBody, request.body)
      const changed =
        method === 'POST'
          ? await admin.addAllowlistEntries(key, kind, entries)
          : await admin.removeAllowlistEntries(key, kind, entries)
      return changed.settings.allowlists
    }
  } else if (sub === 'jwt-keys') {
    if (subId === undefined && method === 'POST') {
      const { kid, publicKey } = parse(jwtKeyBody, request.body)
      return toKeyView(await admin.addJwtKey(key, kid, publicKey)).jwt
    }
    if (subId !== undefined && method === 'DELETE') return toKeyView(await admin.removeJwtKey(key, subId)).jwt
  }
  throw new RouteNotFoundError()
}

/** The active key `key` when it is the signed-in account's; NoActiveKeyError (404) for any other. */
async function ownKey(call: AccountCall, key: string): Promise<ApiKey> {
  const found = await call.deps.keyAdmin.show(key)
  if (found.account.id !== call.account.id) throw new NoActiveKeyError()
  return found
}

async function patchKey(call: AccountCall, key: string, patch: z.infer<typeof patchBody>): Promise<ApiKey> {
  const admin = call.deps.keyAdmin
  const { dailyCredits, creditsPerSecond, requireSecret, requireJwt, jwtAudience } = patch
  if (dailyCredits !== undefined || creditsPerSecond !== undefined) {
    await admin.setLimits(key, definedOnly({ dailyCredits, creditsPerSecond }))
  }
  const security = { requireSecret, requireJwt, jwtAudience }
  if (Object.values(security).some((value) => value !== undefined)) {
    await admin.setSecurity(key, definedOnly(security))
  }
  return admin.show(key)
}

/** The body as the operation takes it, or AdminRequestError with each problem and where it is. */
function parse<T>(schema: z.ZodType<T>, body: string): T {
  let value: unknown = {}
  if (body.trim() !== '') {
    try {
      value = JSON.parse(body)
    } catch {
      throw new AdminRequestError('the body is not JSON')
    }
  }
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`)
  throw new AdminRequestError(issues.join('; '))
}

/** Drops undefined members, for options typed with exactOptionalPropertyTypes. */
function definedOnly<T extends Record<string, unknown>>(
  value: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>
  }
}
