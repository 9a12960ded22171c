import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { after, before, describe, it } from 'node:test'
import { storeBackends, type TestDatabase } from '../../test/helpers/storeBackends.ts'
import { keySettingsSchema } from './keySettings.ts'
import type { KeyStore } from './keyStore.ts'
import { type CreateKeyInput, KeyStoreError } from './keyStore.ts'

const settings = keySettingsSchema.parse({})

/** better-sqlite3, for a process of the test's own. */
const sqliteModule = createRequire(import.meta.url).resolve('better-sqlite3')

/** A process that takes the SQLite file's write lock, says so, and lets go of it 300 ms later. */
const holdWriteLock = `
const [modulePath, file] = process.argv.slice(1)
const db = new (require(modulePath))(file)
db.exec('BEGIN IMMEDIATE')
db.prepare("INSERT INTO meta (name, value) VALUES ('lock-test', '1') ON CONFLICT (name) DO UPDATE SET value = excluded.value").run()
process.stdout.write('locked\\n')
setTimeout(() => { db.exec('COMMIT'); db.close() }, 300)
`
const unlimited = () => null

function newAccount(name: string, over: Partial<{ dailyCredits: number; creditsPerSecond: number }> = {}) {
  return {
    create: {
      name,
      plan: 'custom' as const,
      dailyCredits: over.dailyCredits ?? null,
      creditsPerSecond: over.creditsPerSecond ?? null,
    },
  }
}

function input(account: CreateKeyInput['account'], more: Partial<CreateKeyInput> = {}): CreateKeyInput {
  return { account, name: 'k', settings, maxKeysPerAccount: unlimited, ...more }
}

for (const backend of storeBackends) {
  describe(`key store on ${backend.name}`, () => {
    let database: TestDatabase
    let store: KeyStore
    /** The same database as a second process (another gateway, the CLI) sees it. */
    let other: KeyStore
    before(async () => {
      database = await backend.createDatabase()
      store = (await database.open()).keys
      other = (await database.open()).keys
    })
    after(() => database?.remove())

    it('creates a key with its account and reads it back, everywhere, exactly', async () => {
      const created = await store.createKey(
        input(newAccount('acme', { dailyCredits: 10_000_000_000_000, creditsPerSecond: 7 }), {
          name: 'first',
          key: 'a'.repeat(32),
          settings: { ...settings, dailyCredits: 500, networks: ['devnet'] },
        }),
      )
      assert.equal(created.key, 'a'.repeat(32))
      assert.equal(created.name, 'first')
      assert.equal(created.revokedAt, null)
      assert.deepEqual(created.settings, { ...settings, dailyCredits: 500, networks: ['devnet'] })
      assert.equal(created.account.name, 'acme')
      assert.equal(created.account.plan, 'custom')
      assert.equal(created.account.dailyCredits, 10_000_000_000_000)
      assert.equal(created.account.creditsPerSecond, 7)
      assert.ok(created.createdAt instanceof Date)
      assert.deepEqual(await other.getKey(created.key), created)
      assert.deepEqual(await other.getAccount('acme'), created.account)
      assert.equal(await other.getKey('b'.repeat(32)), undefined)
      assert.equal(await other.getAccount('nobody'), undefined)
    })

    it('a generated key is 32 hex characters; keys of one account share it', async () => {
      const first = await store.createKey(input(newAccount('shared')))
      const second = await store.createKey(input({ existing: 'shared' }, { name: 'second' }))
      assert.match(first.key, /^[0-9a-f]{32}$/)
      assert.notEqual(first.key, second.key)
      assert.deepEqual(second.account, first.account)
    })

    it('refuses a missing account and an account name taken, and stores nothing of either', async () => {
      const before = (await store.listKeys()).length
      await assert.rejects(store.createKey(input({ existing: 'missing' })), (err: Error) => {
        assert.ok(err instanceof KeyStoreError)
        assert.equal(err.message, "no account named 'missing'")
        return true
      })
      await store.createKey(input(newAccount('taken')))
      await assert.rejects(store.createKey(input(newAccount('taken'))), (err: Error) => {
        assert.ok(err instanceof KeyStoreError)
        assert.equal(err.message, "account 'taken' already exists")
        return true
      })
      assert.equal((await store.listKeys()).length, before + 1)
    })

    it("holds an account's key limit; revoked keys do not count", async () => {
      const limitOf = (account: { plan: string }) => (account.plan === 'custom' ? 2 : null)
      const first = await store.createKey(input(newAccount('limited'), { maxKeysPerAccount: limitOf }))
      await store.createKey(input({ existing: 'limited' }, { maxKeysPerAccount: limitOf }))
      await assert.rejects(
        store.createKey(input({ existing: 'limited' }, { maxKeysPerAccount: limitOf })),
        (err: Error) => {
          assert.ok(err instanceof KeyStoreError)
          assert.equal(
            err.message,
            "account 'limited' already has 2 key(s), the most its plan (custom) allows",
          )
          return true
        },
      )
      assert.equal(await store.revokeKey(first.key), true)
      await store.createKey(input({ existing: 'limited' }, { maxKeysPerAccount: limitOf }))
      const active = (await store.listKeys()).filter(
        (key) => key.account.name === 'limited' && key.revokedAt === null,
      )
      assert.equal(active.length, 2)
    })

    it('concurrent creations on one account: exactly the limit succeed, through two connections', async () => {
      const limit = 3
      await store.createKey(input(newAccount('racing'), { maxKeysPerAccount: () => limit }))
      const attempts = Array.from({ length: 12 }, (_, i) =>
        (i % 2 === 0 ? store : other).createKey(
          input({ existing: 'racing' }, { name: `race-${i}`, maxKeysPerAccount: () => limit }),
        ),
      )
      const results = await Promise.allSettled(attempts)
      const refused = results.filter((result) => result.status === 'rejected')
      assert.equal(results.length - refused.length, limit - 1)
      for (const result of refused) assert.ok(result.reason instanceof KeyStoreError, String(result.reason))
      const keys = (await store.listKeys()).filter((key) => key.account.name === 'racing')
      assert.equal(keys.length, limit)
    })

    if (backend.name === 'sqlite') {
      it('creates a key while another process writes to the file: waits for its turn, never "database is locked"', async () => {
        const file = (database.storage as { sqlite: string }).sqlite
        // another process (a gateway flushing usage) holds the file's write lock for a moment
        const writer = spawn(process.execPath, ['-e', holdWriteLock, sqliteModule, file], {
          stdio: ['ignore', 'pipe', 'inherit'],
        })
        const exited = once(writer, 'exit')
        await Promise.race([
          once(writer.stdout, 'data'),
          exited.then((code) => assert.fail(`the writer ended (${code}) before it took the lock`)),
        ])
        const created = await store.createKey(input(newAccount('while-locked')))
        assert.equal(created.account.name, 'while-locked')
        assert.deepEqual(await exited, [0, null])
      })
    }

    it('concurrent creations of one account name: one succeeds, the others are told it exists', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 === 0 ? store : other).createKey(input(newAccount('once'))),
        ),
      )
      assert.equal(results.filter((result) => result.status === 'fulfilled').length, 1)
      for (const result of results) {
        if (result.status === 'rejected') assert.equal(result.reason.message, "account 'once' already exists")
      }
    })

    it('lists every key in creation order, revoked ones included', async () => {
      const created = await store.createKey(input(newAccount('listed')))
      assert.equal(await store.revokeKey(created.key), true)
      const listed = await other.listKeys()
      const ids = listed.map((key) => key.id)
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
      )
      const revoked = listed.find((key) => key.key === created.key)
      assert.ok(revoked?.revokedAt instanceof Date)
    })

    it("lists one account's keys alone, oldest first, revoked ones included", async () => {
      const first = await store.createKey(input(newAccount('owner')))
      await store.createKey(input(newAccount('neighbour')))
      const second = await store.createKey(input({ existing: 'owner' }, { name: 'second' }))
      assert.equal(await store.revokeKey(first.key), true)
      const listed = await other.listAccountKeys(first.account.id)
      assert.deepEqual(
        listed.map((key) => [key.key, key.revokedAt === null]),
        [
          [first.key, false],
          [second.key, true],
        ],
      )
      assert.deepEqual(listed[1], await other.getKey(second.key))
      assert.deepEqual(await other.listAccountKeys(-1), [])
    })

    it('updates settings and revokes only an active key', async () => {
      const created = await store.createKey(input(newAccount('changes')))
      const changed = {
        ...settings,
        creditsPerSecond: 9,
        allowlists: { ...settings.allowlists, methods: ['eth_call'] },
      }
      assert.equal(await store.updateKeySettings(created.key, changed), true)
      assert.deepEqual((await other.getKey(created.key))?.settings, changed)
      assert.equal(await store.updateKeySettings('f'.repeat(32), changed), false)
      assert.equal(await store.revokeKey(created.key), true)
      assert.equal(await store.revokeKey(created.key), false)
      assert.equal(await store.revokeKey('f'.repeat(32)), false)
      assert.equal(await store.updateKeySettings(created.key, settings), false)
      assert.deepEqual((await other.getKey(created.key))?.settings, changed)
    })

    it('the keys version changes with every change of a key, and is the same for every reader', async () => {
      const versions: string[] = [await store.getKeysVersion()]
      const noteChange = async () => {
        const version = await other.getKeysVersion()
        assert.ok(!versions.includes(version), `version ${version} seen before`)
        versions.push(version)
        assert.equal(await store.getKeysVersion(), version)
      }
      const created = await store.createKey(input(newAccount('versioned')))
      await noteChange()
      await store.createKey(input({ existing: 'versioned' }))
      await noteChange()
      await store.updateKeySettings(created.key, { ...settings, secretHash: 'one' })
      await noteChange()
      assert.equal(await store.replaceSecretHash(created.key, 'one', 'two'), true)
      await noteChange()
      await store.revokeKey(created.key)
      await noteChange()
      // a refused creation changes nothing
      await assert.rejects(store.createKey(input(newAccount('versioned'))))
      assert.equal(await other.getKeysVersion(), versions.at(-1))
    })

    it('replaces a secret hash only while it still is the one read', async () => {
      const created = await store.createKey(
        input(newAccount('secrets'), { settings: { ...settings, secretHash: 'old' } }),
      )
      assert.equal(await store.replaceSecretHash(created.key, 'stale', 'new'), false)
      assert.equal(await store.replaceSecretHash(created.key, 'old', 'new'), true)
      const stored = await other.getKey(created.key)
      assert.equal(stored?.settings.secretHash, 'new')
      assert.deepEqual({ ...stored?.settings, secretHash: 'old' }, { ...settings, secretHash: 'old' })
      await store.revokeKey(created.key)
      assert.equal(await store.replaceSecretHash(created.key, 'new', 'newer'), false)
    })

    it('meta values: set replaces, ensure keeps the first, racing processes agree', async () => {
      assert.equal(await store.getMeta('colour'), undefined)
      await store.setMeta('colour', 'red')
      await other.setMeta('colour', 'blue')
      assert.equal(await store.getMeta('colour'), 'blue')
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 === 0 ? store : other).ensureMeta('hash_key', `value-${i}`),
        ),
      )
      assert.equal(new Set(answers).size, 1)
      assert.equal(await store.getMeta('hash_key'), answers[0])
      assert.equal(await other.ensureMeta('hash_key', 'later'), answers[0])
    })
  })
}
