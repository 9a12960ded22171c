import { readFileSync } from 'node:fs'
import { type Command, InvalidArgumentError, Option } from 'commander'
import { type AllowlistKind, allowlistKinds } from '../auth/allowlistKind.ts'
import type { ApiKey } from '../auth/apiKey.ts'
import { toKeyView } from '../auth/keyView.ts'
import { allowlistKindList, allowlistKindNames, toAllowlistKind } from '../auth/toAllowlistKind.ts'
import { planNames } from '../config/planNames.ts'
import { configOption } from './configOption.ts'
import { print, table, withAdmin } from './openAdmin.ts'

type Common = { config?: string; json?: boolean }

export function addKeysCommand(program: Command): void {
  const keys = program.command('keys').description('create and manage API keys')

  keys
    .command('create')
    .description('create an API key (and a new account for it, unless --account names one)')
    .addOption(new Option('--plan <plan>', 'plan of a new account').choices(planNames).default('core'))
    .option('--name <name>', 'a label for the key', '')
    .option('--account <name>', 'add the key to this account, or name the new one')
    .option('--daily-credits <n>', "the key's own credits per day (custom plan: the account's)", positiveInt)
    .option(
      '--credits-per-second <n>',
      "the key's own credits per second (custom plan: the account's)",
      positiveInt,
    )
    .option('--secret', 'make a secret for the key (printed once)')
    .option('--failover', 'partner failover for every request (growth and custom plans)')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action(
      (
        options: Common & {
          plan: (typeof planNames)[number]
          name: string
          account?: string
          dailyCredits?: number
          creditsPerSecond?: number
          secret?: boolean
          failover?: boolean
        },
        command: Command,
      ) =>
        withAdmin(options.config, async ({ admin }) => {
          const planGiven = command.getOptionValueSource('plan') === 'cli'
          const { key, secret } = await admin.create({
            ...(planGiven || options.account === undefined ? { plan: options.plan } : {}),
            name: options.name,
            ...(options.account === undefined ? {} : { account: options.account }),
            ...(options.dailyCredits === undefined ? {} : { dailyCredits: options.dailyCredits }),
            ...(options.creditsPerSecond === undefined ? {} : { creditsPerSecond: options.creditsPerSecond }),
            secret: options.secret ?? false,
            failover: options.failover ?? false,
          })
          if (options.json) return print(JSON.stringify({ ...toKeyView(key), ...(secret ? { secret } : {}) }))
          print(key.key)
          if (secret) print(`secret: ${secret}   (shown once: store it now)`)
        }),
    )

  keys
    .command('list')
    .description('list API keys')
    .option('--all', 'include revoked keys')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action((options: Common & { all?: boolean }) =>
      withAdmin(options.config, async ({ admin }) => {
        const list = (await admin.list()).filter((key) => options.all || key.revokedAt === null)
        if (options.json) return print(JSON.stringify(list.map(toKeyView)))
        if (list.length === 0) return print('no keys')
        print(
          table([
            ['KEY', 'NAME', 'ACCOUNT', 'PLAN', 'CREATED', 'STATUS'],
            ...list.map((key) => [
              key.key,
              key.name || '-',
              key.account.name,
              key.account.plan,
              key.createdAt.toISOString().slice(0, 10),
              key.revokedAt ? 'revoked' : 'active',
            ]),
          ]),
        )
      }),
    )

  keys
    .command('show')
    .description("show a key's plan, limits and security settings")
    .argument('<key>')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action((key: string, options: Common) =>
      withAdmin(options.config, async ({ admin }) => printKey(await admin.show(key), options.json)),
    )

  keys
    .command('revoke')
    .description('revoke an API key: it is refused from then on')
    .argument('<key>')
    .addOption(configOption())
    .action((key: string, options: Common) =>
      withAdmin(options.config, async ({ admin }) => {
        await admin.revoke(key)
        print('revoked')
      }),
    )

  keys
    .command('rotate-secret')
    .description('make a new secret for the key (printed once); the old one stops working')
    .argument('<key>')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action((key: string, options: Common) =>
      withAdmin(options.config, async ({ admin }) => {
        const { secret } = await admin.rotateSecret(key)
        print(
          options.json ? JSON.stringify({ key, secret }) : `secret: ${secret}   (shown once: store it now)`,
        )
      }),
    )

  keys
    .command('set-limits')
    .description("set the key's own limits (0 = the plan's) and its failover switch")
    .argument('<key>')
    .option('--daily-credits <n>', 'credits per day', nonNegativeInt)
    .option('--credits-per-second <n>', 'credits per second', nonNegativeInt)
    .option('--failover', 'partner failover for every request')
    .option('--no-failover', 'partner failover only when a request asks for it')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action(
      (
        key: string,
        options: Common & { dailyCredits?: number; creditsPerSecond?: number; failover?: boolean },
      ) =>
        withAdmin(options.config, async ({ admin }) => {
          const updated = await admin.setLimits(key, {
            ...(options.dailyCredits === undefined ? {} : { dailyCredits: options.dailyCredits }),
            ...(options.creditsPerSecond === undefined ? {} : { creditsPerSecond: options.creditsPerSecond }),
            ...(options.failover === undefined ? {} : { failover: options.failover }),
          })
          printKey(updated, options.json)
        }),
    )

  keys
    .command('security')
    .description('require a secret or a JWT, set the JWT audience and the route headers')
    .argument('<key>')
    .option('--require-secret', 'refuse requests without the secret')
    .option('--no-require-secret', 'accept requests without the secret')
    .option('--require-jwt', 'refuse requests without a valid JWT')
    .option('--no-require-jwt', 'accept requests without a JWT')
    .option('--jwt-audience <aud>', 'the `aud` every JWT must carry')
    .option('--no-jwt-audience', 'accept JWTs whatever their audience')
    .addOption(
      new Option(
        '--route-header <mode>',
        'which upstream answered, on the answers: off, on, or asked',
      ).choices(['off', 'on', 'asked']),
    )
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action(
      (
        key: string,
        options: Common & {
          requireSecret?: boolean
          requireJwt?: boolean
          jwtAudience?: string | false
          routeHeader?: 'off' | 'on' | 'asked'
        },
      ) =>
        withAdmin(options.config, async ({ admin }) => {
          const updated = await admin.setSecurity(key, {
            ...(options.requireSecret === undefined ? {} : { requireSecret: options.requireSecret }),
            ...(options.requireJwt === undefined ? {} : { requireJwt: options.requireJwt }),
            ...(options.jwtAudience === undefined ? {} : { jwtAudience: options.jwtAudience || null }),
            ...(options.routeHeader === undefined ? {} : { routeHeader: options.routeHeader }),
          })
          printKey(updated, options.json)
        }),
    )

  const jwt = keys.command('jwt').description("manage a key's JWT public keys (up to 3)")
  jwt
    .command('add')
    .description('add (or replace) a PEM public key, RS256 or ES256, under a kid')
    .argument('<key>')
    .requiredOption('--kid <kid>', 'the key id JWTs name in their header')
    .requiredOption('--public-key <file>', 'PEM (SPKI) public key file')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action((key: string, options: Common & { kid: string; publicKey: string }) =>
      withAdmin(options.config, async ({ admin }) => {
        printKey(
          await admin.addJwtKey(key, options.kid, readFileSync(options.publicKey, 'utf8')),
          options.json,
        )
      }),
    )
  jwt
    .command('remove')
    .argument('<key>')
    .requiredOption('--kid <kid>', 'the key id to remove')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action((key: string, options: Common & { kid: string }) =>
      withAdmin(options.config, async ({ admin }) =>
        printKey(await admin.removeJwtKey(key, options.kid), options.json),
      ),
    )

  const allowlist = keys
    .command('allowlist')
    .description(`manage allowlists: ${allowlistKindList} (30 entries each)`)
  for (const action of ['add', 'remove'] as const) {
    allowlist
      .command(action)
      .description(`${action} allowlist entries`)
      .argument('<key>')
      .argument('<kind>', allowlistKindList.replaceAll(', ', ' | '), allowlistKind)
      .argument('<entries...>')
      .option('--json', 'print JSON')
      .addOption(configOption())
      .action((key: string, kind: AllowlistKind, entries: string[], options: Common) =>
        withAdmin(options.config, async ({ admin }) => {
          const updated =
            action === 'add'
              ? await admin.addAllowlistEntries(key, kind, entries)
              : await admin.removeAllowlistEntries(key, kind, entries)
          printAllowlists(updated, options.json)
        }),
      )
  }
  allowlist
    .command('list')
    .argument('<key>')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action((key: string, options: Common) =>
      withAdmin(options.config, async ({ admin }) => printAllowlists(await admin.show(key), options.json)),
    )

  keys
    .command('networks')
    .description('show, or limit, the networks a key may use')
    .argument('<key>')
    .option('--set <names>', 'comma-separated network names')
    .option('--all', 'allow every network')
    .option('--json', 'print JSON')
    .addOption(configOption())
    .action((key: string, options: Common & { set?: string; all?: boolean }) =>
      withAdmin(options.config, async ({ admin, networks }) => {
        let apiKey = await admin.show(key)
        if (options.all) apiKey = await admin.setNetworks(key, [], networks)
        else if (options.set !== undefined) {
          const names = options.set
            .split(',')
            .map((name) => name.trim())
            .filter(Boolean)
          apiKey = await admin.setNetworks(key, names, networks)
        }
        const allowed = apiKey.settings.networks
        if (options.json) return print(JSON.stringify({ key, networks: allowed, all: allowed.length === 0 }))
        print(allowed.length === 0 ? `every network (${networks.join(', ')})` : allowed.join(', '))
      }),
    )
}

function printKey(key: ApiKey, json: boolean | undefined) {
  const view = toKeyView(key)
  if (json) return print(JSON.stringify(view))
  const lines = [
    ['key', view.key],
    ['name', view.name || '-'],
    ['account', `${view.account} (${view.plan})`],
    ['status', view.status],
    ['created', view.createdAt],
    ['daily credits', view.dailyCredits === null ? "the plan's" : String(view.dailyCredits)],
    ['credits per second', view.creditsPerSecond === null ? "the plan's" : String(view.creditsPerSecond)],
    ['failover', view.failover ? 'on' : 'off'],
    ['route header', view.routeHeader],
    ['secret', view.hasSecret ? (view.requireSecret ? 'set, required' : 'set') : 'none'],
    ['networks', view.networks.length === 0 ? 'all' : view.networks.join(', ')],
    [
      'jwt',
      [
        view.jwt.required ? 'required' : 'optional',
        ...(view.jwt.audience === null ? [] : [`audience ${view.jwt.audience}`]),
        `keys: ${view.jwt.publicKeys.map((k) => k.kid).join(', ') || 'none'}`,
      ].join('; '),
    ],
  ]
  for (const kind of allowlistKinds)
    lines.push([`allowlist ${allowlistKindNames[kind]}`, view.allowlists[kind].join(', ') || '(all)'])
  print(table(lines))
}

function printAllowlists(key: ApiKey, json: boolean | undefined) {
  const { allowlists } = key.settings
  if (json) return print(JSON.stringify({ key: key.key, allowlists }))
  print(
    table(allowlistKinds.map((kind) => [allowlistKindNames[kind], allowlists[kind].join(', ') || '(all)'])),
  )
}

function allowlistKind(value: string): AllowlistKind {
  const kind = toAllowlistKind(value)
  if (!kind) throw new InvalidArgumentError(`expected one of ${allowlistKindList}`)
  return kind
}

function positiveInt(value: string): number {
  const number = Number(value)
  if (!Number.isSafeInteger(number) || number <= 0)
    throw new InvalidArgumentError('expected a positive integer')
  return number
}

function nonNegativeInt(value: string): number {
  const number = Number(value)
  if (!Number.isSafeInteger(number) || number < 0)
    throw new InvalidArgumentError('expected a whole number, 0 or more')
  return number
}
