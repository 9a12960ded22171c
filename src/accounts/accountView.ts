import { toKeyView } from '../auth/keyView.ts'
import type { AccountRecord } from './accountStore.ts'
import type { AccountDetails } from './createAccountAdmin.ts'

/** A line of `accounts list` and of GET /admin/accounts: never a token, only whether one is in use. */
export function toAccountSummary(account: AccountRecord) {
  return {
    name: account.name,
    plan: account.plan,
    createdAt: account.createdAt.toISOString(),
    token: account.tokenCreatedAt === null ? null : { createdAt: account.tokenCreatedAt.toISOString() },
  }
}

/** What `accounts show` and GET /admin/accounts/NAME show: the summary, the credits and every key. */
export function toAccountView(details: AccountDetails) {
  return {
    ...toAccountSummary(details.account),
    dailyCredits: details.dailyCredits,
    creditsPerSecond: details.creditsPerSecond,
    creditsUsedToday: details.creditsUsedToday,
    resetsAt: details.resetsAt.toISOString(),
    keys: details.keys.map(toKeyView),
  }
}

export type AccountView = ReturnType<typeof toAccountView>
