import type { Buffer } from 'node:buffer'
import { randomBytes } from 'node:crypto'
import { importSPKI } from 'jose'
import type { PlanName, PlansConfig } from '../config/configSchema.ts'
import { planNames } from '../config/planNames.ts'
import { KeyAdminError, KeyConflictError, NoActiveKeyError } from '../errors/adminErrors.ts'
import type { AllowlistKind } from './allowlistKind.ts'
import type { Account, ApiKey } from './apiKey.ts'
import { generateSecret, getSecretHashKey, hashSecret } from './hashSecret.ts'
import { type KeySettings, keySettingsSchema, maxAllowlistEntries, maxJwtPublicKeys } from './keySettings.ts'
import { type KeyStore, KeyStoreError } from './keyStore.ts'
import { parseAllowlistEntry } from './parseAllowlistEntry.ts'
import { parseName } from './parseName.ts'

export type CreateKeyOptions = {
  plan?: PlanName
  name?: string
  /** An existing account to add the key to; without it a new account is made for the key. */
  account?: string
  dailyCredits?: number
  creditsPerSecond?: number
  secret?: boolean
  failover?: boolean
}

export type LimitsPatch = { dailyCredits?: number; creditsPerSecond?: number; failover?: boolean }
export type SecurityPatch = {
  requireSecret?: boolean
  requireJwt?: boolean
  jwtAudience?: string | null
  /** The route headers on the key's answers (docs/observability.md#route-header). */
  routeHeader?: KeySettings['routeHeader']
}

export type KeyAdmin = ReturnType<typeof createKeyAdmin>

/**
 * Every key operation, with its rules, for the CLI and the admin API alike (docs/compatibility.md §3 and §4).
 */
export function createKeyAdmin(store: KeyStore, initialPlans: PlansConfig) {
  let plans = initialPlans
  let hashKey: Promise<Buffer> | undefined
  /** A new secret and its stored form, under the database's hash key (loaded, or made, on first use). */
  async function newSecret(): Promise<{ secret: string; secretHash: string }> {
    hashKey ??= getSecretHashKey(store).catch((err: unknown) => {
      hashKey = undefined
      throw err
    })
    const secret = generateSecret()
    return { secret, secretHash: hashSecret(secret, await hashKey) }
  }

  async function activeKey(key: string): Promise<ApiKey> {
    const found = await store.getKey(key)
    if (!found || found.revokedAt !== null) throw new NoActiveKeyError()
    return found
  }

  async function update(
    key: string,
    change: (settings: KeySettings, apiKey: ApiKey) => Promise<KeySettings>,
  ) {
    const apiKey = await activeKey(key)
    const settings = keySettingsSchema.parse(await change(structuredClone(apiKey.settings), apiKey))
    await store.updateKeySettings(key, settings)
    return (await store.getKey(key)) as ApiKey
  }

  /** Fixed plans: a key's own numbers can only lower the plan's. Custom: the account's numbers are the plan. */
  function checkLimits(
    account: Pick<Account, 'plan' | 'dailyCredits' | 'creditsPerSecond'>,
    settings: KeySettings,
  ): void {
    const plan = plans[account.plan]
    const daily = plan.dailyCredits ?? account.dailyCredits
    const perSecond = plan.creditsPerSecond ?? account.creditsPerSecond
    if (daily !== null && settings.dailyCredits > daily) {
      throw new KeyAdminError(`--daily-credits can only lower the plan's ${daily} credits per day`)
    }
    if (perSecond !== null && settings.creditsPerSecond > perSecond) {
      throw new KeyAdminError(
        `--credits-per-second can only lower the plan's ${perSecond} credits per second`,
      )
    }
    if (settings.failover && !plan.failover) {
      throw new KeyAdminError(`the ${account.plan} plan does not include partner failover`)
    }
    if (settings.requireSecret && settings.jwt.required) {
      throw new KeyAdminError('a key can require a secret or a JWT, not both')
    }
    if (settings.requireSecret && !settings.secretHash)
      throw new KeyAdminError('the key has no secret to require')
    if (settings.jwt.required && settings.jwt.publicKeys.length === 0) {
      throw new KeyAdminError('add a JWT public key before requiring JWTs')
    }
  }

  return {
    get plans(): PlansConfig {
      return plans
    },
    /** New plan numbers (a config reload): the checks of later operations use them. */
    setPlans(next: PlansConfig): void {
      plans = next
    },

    async create(options: CreateKeyOptions): Promise<{ key: ApiKey; secret: string | undefined }> {
      // the names shown in lists and on the dashboard, checked before anything is looked up (a NUL
      // is not even a valid PostgreSQL text)
      const name = parseName('the key name', options.name ?? '')
      if (options.account !== undefined) parseName('the account name', options.account)
      const existing = options.account === undefined ? undefined : await store.getAccount(options.account)
      if (existing && options.plan !== undefined && options.plan !== existing.plan) {
        throw new KeyAdminError(
          `account '${existing.name}' is on the ${existing.plan} plan, not ${options.plan}`,
        )
      }
      const planName = existing?.plan ?? options.plan ?? 'core'
      const plan = plans[planName]
      if (!plan) throw new KeyAdminError(`unknown plan '${planName}' (plans: ${planNames.join(', ')})`)
      const isCustom = plan.dailyCredits === null || plan.creditsPerSecond === null
      const made = options.secret ? await newSecret() : undefined
      const secret = made?.secret
      const settings = keySettingsSchema.parse({
        failover: options.failover ?? false,
        ...(made ? { secretHash: made.secretHash } : {}),
      })

      let account: Pick<Account, 'name' | 'plan' | 'dailyCredits' | 'creditsPerSecond'>
      if (existing || !isCustom) {
        // the key's own numbers, which may only lower the plan's
        settings.dailyCredits = options.dailyCredits ?? 0
        settings.creditsPerSecond = options.creditsPerSecond ?? 0
      } else if (!options.dailyCredits || !options.creditsPerSecond) {
        throw new KeyAdminError(
          'the custom plan needs --daily-credits and --credits-per-second (its numbers)',
        )
      }
      if (existing) {
        account = existing
      } else {
        account = {
          name: options.account ?? `account-${randomBytes(4).toString('hex')}`,
          plan: planName,
          dailyCredits: isCustom ? (options.dailyCredits ?? null) : null,
          creditsPerSecond: isCustom ? (options.creditsPerSecond ?? null) : null,
        }
      }
      checkLimits(account, settings)
      try {
        const key = await store.createKey({
          account: existing ? { existing: existing.name } : { create: account },
          name,
          settings,
          maxKeysPerAccount: (created) => plans[created.plan]?.keysPerAccount ?? null,
        })
        return { key, secret }
      } catch (err) {
        if (err instanceof KeyStoreError) throw new KeyConflictError(err.message)
        throw err
      }
    },

    list: () => store.listKeys(),
    show: activeKey,

    async revoke(key: string): Promise<void> {
      if (!(await store.revokeKey(key))) throw new NoActiveKeyError()
    },

    async rotateSecret(key: string): Promise<{ key: ApiKey; secret: string }> {
      const { secret, secretHash } = await newSecret()
      return { key: await update(key, async (settings) => ({ ...settings, secretHash })), secret }
    },

    setLimits(key: string, patch: LimitsPatch) {
      return update(key, async (settings, apiKey) => {
        const next = { ...settings }
        if (patch.dailyCredits !== undefined) next.dailyCredits = patch.dailyCredits
        if (patch.creditsPerSecond !== undefined) next.creditsPerSecond = patch.creditsPerSecond
        if (patch.failover !== undefined) next.failover = patch.failover
        checkLimits(apiKey.account, next)
        return next
      })
    },

    setSecurity(key: string, patch: SecurityPatch) {
      return update(key, async (settings, apiKey) => {
        const next = { ...settings, jwt: { ...settings.jwt } }
        if (patch.requireSecret !== undefined) next.requireSecret = patch.requireSecret
        if (patch.requireJwt !== undefined) next.jwt.required = patch.requireJwt
        if (patch.jwtAudience === null) delete next.jwt.audience
        else if (patch.jwtAudience !== undefined) next.jwt.audience = patch.jwtAudience
        if (patch.routeHeader !== undefined) next.routeHeader = patch.routeHeader
        checkLimits(apiKey.account, next)
        return next
      })
    },

    addAllowlistEntries(key: string, kind: AllowlistKind, entries: string[]) {
      return update(key, async (settings) => {
        const list = settings.allowlists[kind]
        for (const entry of entries) {
          const parsed = parseAllowlistEntry(kind, entry)
          if (!list.includes(parsed)) list.push(parsed)
        }
        if (list.length > maxAllowlistEntries) {
          throw new KeyAdminError(`an allowlist holds at most ${maxAllowlistEntries} entries`)
        }
        return settings
      })
    },

    removeAllowlistEntries(key: string, kind: AllowlistKind, entries: string[]) {
      return update(key, async (settings) => {
        const list = settings.allowlists[kind]
        // an entry found as typed goes without a check, so one stored before a check existed can be removed
        const remove = new Set(
          entries.map((entry) =>
            list.includes(entry.trim()) ? entry.trim() : parseAllowlistEntry(kind, entry),
          ),
        )
        settings.allowlists[kind] = list.filter((entry) => !remove.has(entry))
        return settings
      })
    },

    /** Limits the key to these networks; an empty list allows every network. */
    setNetworks(key: string, networks: string[], known: readonly string[]) {
      const unknown = networks.filter((network) => !known.includes(network))
      if (unknown.length > 0) throw new KeyAdminError(`unknown network(s): ${unknown.join(', ')}`)
      return update(key, async (settings) => ({ ...settings, networks: [...new Set(networks)] }))
    },

    addJwtKey(key: string, kid: string, pem: string) {
      return update(key, async (settings) => {
        const alg = await detectJwtAlgorithm(pem)
        const publicKeys = settings.jwt.publicKeys.filter((entry) => entry.kid !== kid)
        publicKeys.push({ kid, alg, pem: pem.trim() })
        if (publicKeys.length > maxJwtPublicKeys) {
          throw new KeyAdminError(`a key holds at most ${maxJwtPublicKeys} JWT public keys`)
        }
        return { ...settings, jwt: { ...settings.jwt, publicKeys } }
      })
    },

    removeJwtKey(key: string, kid: string) {
      return update(key, async (settings, apiKey) => {
        const next = { ...settings, jwt: { ...settings.jwt } }
        next.jwt.publicKeys = settings.jwt.publicKeys.filter((entry) => entry.kid !== kid)
        checkLimits(apiKey.account, next)
        return next
      })
    },
  }
}

/** RS256 for an RSA public key, ES256 for a P-256 one; anything else is refused. */
async function detectJwtAlgorithm(pem: string): Promise<'RS256' | 'ES256'> {
  for (const alg of ['RS256', 'ES256'] as const) {
    try {
      await importSPKI(pem.trim(), alg)
      return alg
    } catch {
      // try the next algorithm
    }
  }
  throw new KeyAdminError('expected a PEM public key (SPKI) for RS256 (RSA) or ES256 (P-256)')
}
