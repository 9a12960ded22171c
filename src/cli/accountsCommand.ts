import type { Command } from 'commander'
import { toAccountSummary, toAccountView } from '../accounts/accountView.ts'
import { addAlertsCommand } from './alertsCommand.ts'
import { configOption } from './configOption.ts'
import { print, table, withAdmin } from './openAdmin.ts'

type Common = { config?: string; json?: boolean }

export function addAccountsCommand(program: Command): void {
  const accounts = program
    .command('accounts')
    .description("accounts (each key's owner) and the tokens their holders sign in with")

  accounts
    .command('list')
    .description('list accounts')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action((options: Common) =>
      withAdmin(options.config, async ({ accounts: admin }) => {
        const list = (await admin.list()).map(toAccountSummary)
        if (options.json) return print(JSON.stringify(list))
        if (list.length === 0) return print('no accounts')
        print(
          table([
            ['ACCOUNT', 'PLAN', 'CREATED', 'TOKEN'],
            ...list.map((account) => [
              account.name,
              account.plan,
              account.createdAt.slice(0, 10),
              account.token === null ? 'none' : `since ${account.token.createdAt.slice(0, 10)}`,
            ]),
          ]),
        )
      }),
    )

  accounts
    .command('show')
    .description("show an account's plan, credits today and keys")
    .argument('<account>', 'the account, as `tollgate keys show` names it')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action((name: string, options: Common) =>
      withAdmin(options.config, async ({ accounts: admin }) => {
        const view = toAccountView(await admin.show(name))
        if (options.json) return print(JSON.stringify(view))
        const limit = (value: number | null) => (value === null ? 'no limit' : String(value))
        print(
          table([
            ['account', view.name],
            ['plan', view.plan],
            ['created', view.createdAt],
            ['daily credits', limit(view.dailyCredits)],
            ['credits per second', limit(view.creditsPerSecond)],
            ['credits used today', `${view.creditsUsedToday} (resets ${view.resetsAt})`],
            ['token', view.token === null ? 'none' : `in use since ${view.token.createdAt}`],
          ]),
        )
        print('')
        if (view.keys.length === 0) return print('no keys')
        print(
          table([
            ['KEY', 'NAME', 'CREATED', 'STATUS'],
            ...view.keys.map((key) => [key.key, key.name || '-', key.createdAt.slice(0, 10), key.status]),
          ]),
        )
      }),
    )

  accounts
    .command('token')
    .description(
      "make the account's sign-in token for the account API (printed once; the one before stops working), or --revoke it",
    )
    .argument('<account>', 'the account, as `tollgate keys show` names it')
    .option('--revoke', 'stop the token in use: the account API refuses it from then on')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action((name: string, options: Common & { revoke?: boolean }) =>
      withAdmin(options.config, async ({ accounts: admin }) => {
        if (options.revoke) {
          const revoked = await admin.revokeToken(name)
          if (options.json) return print(JSON.stringify({ account: name, revoked }))
          return print(revoked ? 'revoked' : 'no token was in use')
        }
        const token = await admin.makeToken(name)
        print(options.json ? JSON.stringify({ token }) : `token: ${token}   (shown once: store it now)`)
      }),
    )

  addAlertsCommand(accounts)
}
