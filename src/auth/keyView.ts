import type { ApiKey } from './apiKey.ts'

/** What the CLI and the admin API show of a key: everything but the secret's hash. */
export function toKeyView(key: ApiKey) {
  const { settings } = key
  return {
    key: key.key,
    name: key.name,
    account: key.account.name,
    plan: key.account.plan,
    status: key.revokedAt === null ? 'active' : 'revoked',
    createdAt: key.createdAt.toISOString(),
    revokedAt: key.revokedAt?.toISOString() ?? null,
    dailyCredits: settings.dailyCredits || null,
    creditsPerSecond: settings.creditsPerSecond || null,
    accountDailyCredits: key.account.dailyCredits,
    accountCreditsPerSecond: key.account.creditsPerSecond,
    failover: settings.failover,
    routeHeader: settings.routeHeader,
    hasSecret: settings.secretHash !== undefined,
    requireSecret: settings.requireSecret,
    networks: settings.networks,
    allowlists: settings.allowlists,
    jwt: {
      required: settings.jwt.required,
      audience: settings.jwt.audience ?? null,
      publicKeys: settings.jwt.publicKeys.map(({ kid, alg }) => ({ kid, alg })),
    },
  }
}

export type KeyView = ReturnType<typeof toKeyView>
