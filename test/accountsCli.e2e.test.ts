import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { createAccountAdmin } from '../src/accounts/createAccountAdmin.ts'
import { createStores } from '../src/app/createStores.ts'
import { loadConfig } from '../src/config/loadConfig.ts'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { bin } from './helpers/gatewayProcess.ts'

const run = promisify(execFile)

/** The account a token signs in to, read as the gateway reads it (undefined: refused). */
async function accountOfToken(configFile: string, token: string): Promise<string | undefined> {
  const config = loadConfig(configFile)
  const stores = await createStores(config.storage, { exclusive: false })
  try {
    const admin = createAccountAdmin({ ...stores, plans: () => config.plans, now: Date.now })
    return (await admin.accountOfToken(token))?.name
  } finally {
    await stores.close()
  }
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`tollgate accounts on ${backend}`, () => {
    let dir: string
    let config: string[]
    let tollgate: (args: string[]) => Promise<{ stdout: string; stderr: string }>
    let schema: TestSchema | undefined

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'tollgate-accounts-'))
      const configFile = join(dir, 'tollgate.yaml')
      schema = backend === 'postgres' ? await createTestSchema() : undefined
      const storage = schema ? `postgres: '${schema.url}'` : `sqlite: ${join(dir, 'tollgate.db')}`
      writeFileSync(configFile, `storage:\n  ${storage}\n`)
      config = ['--config', configFile]
      const env = { ...process.env }
      delete env.TOLLGATE_CONFIG
      delete env.TOLLGATE_POSTGRES_URL
      tollgate = (args) => run(process.execPath, [bin, ...args], { env })
      await tollgate([
        'keys',
        'create',
        '--account',
        'acme',
        '--plan',
        'developer',
        '--name',
        'web',
        ...config,
      ])
      await tollgate(['keys', 'create', '--account', 'acme', '--name', 'backend', ...config])
      await tollgate(['keys', 'create', '--account', 'globex', '--name', 'app', ...config])
      // globex has a token in use from the start; acme's come and go in the tests
      await tollgate(['accounts', 'token', 'globex', ...config])
    })
    after(async () => {
      await schema?.drop()
      rmSync(dir, { recursive: true, force: true })
    })

    it('token --json prints {"token"} once; a new token replaces it; --revoke stops it', async () => {
      const first = JSON.parse((await tollgate(['accounts', 'token', 'acme', '--json', ...config])).stdout)
      assert.deepEqual(Object.keys(first), ['token'])
      assert.match(first.token, /^tga_[0-9a-f]{32}$/)
      assert.equal(await accountOfToken(config[1] as string, first.token), 'acme')

      const plain = (await tollgate(['accounts', 'token', 'acme', ...config])).stdout
      const match = /^token: (tga_[0-9a-f]{32}) {3}\(shown once: store it now\)\n$/.exec(plain)
      assert.ok(match, plain)
      const second = match[1] as string
      assert.equal(await accountOfToken(config[1] as string, first.token), undefined)
      assert.equal(await accountOfToken(config[1] as string, second), 'acme')

      assert.equal((await tollgate(['accounts', 'token', 'acme', '--revoke', ...config])).stdout, 'revoked\n')
      assert.equal(await accountOfToken(config[1] as string, second), undefined)
      assert.equal(
        (await tollgate(['accounts', 'token', 'acme', '--revoke', ...config])).stdout,
        'no token was in use\n',
      )
    })

    it('the database keeps only the hash: the token appears nowhere in its file', {
      skip: backend !== 'sqlite',
    }, async () => {
      const { token } = JSON.parse(
        (await tollgate(['accounts', 'token', 'globex', '--json', ...config])).stdout,
      )
      const bytes = readFileSync(join(dir, 'tollgate.db'))
      assert.equal(bytes.includes(token), false)
      assert.equal(bytes.includes((token as string).slice(4)), false)
    })

    it('list and show: the accounts, their plan, credits and keys; --json the same', async () => {
      const list = JSON.parse((await tollgate(['accounts', 'list', '--json', ...config])).stdout)
      assert.deepEqual(
        list.map((account: { name: string; plan: string; token: unknown }) => [
          account.name,
          account.plan,
          account.token === null,
        ]),
        [
          ['acme', 'developer', true],
          ['globex', 'core', false],
        ],
      )
      const table = (await tollgate(['accounts', 'list', ...config])).stdout
      assert.match(table, /^ACCOUNT +PLAN +CREATED +TOKEN\n/)
      assert.match(table, /^acme +developer +\d{4}-\d\d-\d\d +none$/m)
      assert.match(table, /^globex +core +\d{4}-\d\d-\d\d +since \d{4}-\d\d-\d\d$/m)

      const shown = JSON.parse((await tollgate(['accounts', 'show', 'acme', '--json', ...config])).stdout)
      assert.equal(shown.name, 'acme')
      assert.equal(shown.plan, 'developer')
      assert.equal(shown.dailyCredits, 15_000_000)
      assert.equal(shown.creditsPerSecond, 4_000)
      assert.equal(shown.creditsUsedToday, 0)
      assert.match(shown.resetsAt, /^\d{4}-\d\d-\d\dT00:00:00\.000Z$/)
      assert.deepEqual(
        shown.keys.map((key: { name: string; account: string }) => [key.name, key.account]),
        [
          ['web', 'acme'],
          ['backend', 'acme'],
        ],
      )
      const text = (await tollgate(['accounts', 'show', 'acme', ...config])).stdout
      assert.match(text, /^daily credits +15000000$/m)
      assert.match(text, /^credits used today +0 \(resets /m)
      assert.match(text, /^[0-9a-f]{32} +web +\d{4}-\d\d-\d\d +active$/m)
      assert.doesNotMatch(text, /globex|app/)
    })

    it('an account that does not exist: the reason on stderr, exit 1', async () => {
      for (const args of [
        ['accounts', 'show', 'nobody'],
        ['accounts', 'token', 'nobody'],
        ['accounts', 'token', 'nobody', '--revoke'],
      ]) {
        await assert.rejects(tollgate([...args, ...config]), (err: { stderr: string; code: number }) => {
          assert.equal(err.code, 1)
          assert.equal(err.stderr, 'no account with that name\n')
          return true
        })
      }
    })
  })
}
