import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { storeBackends, type TestDatabase } from '../../test/helpers/storeBackends.ts'
import type { Stores } from '../app/stores.ts'
import { keySettingsSchema } from '../auth/keySettings.ts'

const settings = keySettingsSchema.parse({})

for (const backend of storeBackends) {
  describe(`account store on ${backend.name}`, () => {
    let database: TestDatabase
    let stores: Stores
    /** The same database as a second process (another gateway, the CLI) sees it. */
    let other: Stores
    before(async () => {
      database = await backend.createDatabase()
      stores = await database.open()
      other = await database.open()
      for (const name of ['acme', 'globex']) {
        await stores.keys.createKey({
          account: { create: { name, plan: 'custom', dailyCredits: 1_000, creditsPerSecond: 10 } },
          name: 'k',
          settings,
          maxKeysPerAccount: () => null,
        })
      }
    })
    after(() => database?.remove())

    it('lists accounts oldest first, with no token in use at first', async () => {
      const list = await other.accounts.listAccounts()
      assert.deepEqual(
        list.map(({ name, plan, dailyCredits, creditsPerSecond, tokenCreatedAt }) => ({
          name,
          plan,
          dailyCredits,
          creditsPerSecond,
          tokenCreatedAt,
        })),
        ['acme', 'globex'].map((name) => ({
          name,
          plan: 'custom',
          dailyCredits: 1_000,
          creditsPerSecond: 10,
          tokenCreatedAt: null,
        })),
      )
      const { tokenCreatedAt: _, tokensChangedAt, ...acme } = list[0] as NonNullable<(typeof list)[0]>
      assert.equal(tokensChangedAt, null)
      assert.deepEqual(acme, await stores.keys.getAccount('acme'))
      assert.equal(await other.accounts.getAccountRecord('nobody'), undefined)
    })

    it('finds an account by its token in use; a new token replaces the old at once, everywhere', async () => {
      assert.equal(await stores.accounts.replaceToken('acme', 'hash-1', Date.now()), true)
      const acme = await stores.keys.getAccount('acme')
      assert.deepEqual(await other.accounts.getAccountByTokenHash('hash-1'), acme)
      assert.ok((await other.accounts.getAccountRecord('acme'))?.tokenCreatedAt instanceof Date)
      assert.equal(await stores.accounts.replaceToken('acme', 'hash-2', Date.now()), true)
      assert.equal(await other.accounts.getAccountByTokenHash('hash-1'), undefined)
      assert.deepEqual(await other.accounts.getAccountByTokenHash('hash-2'), acme)
      assert.equal(await other.accounts.getAccountByTokenHash('hash-3'), undefined)
    })

    it("one account's token never finds another account", async () => {
      await stores.accounts.replaceToken('globex', 'hash-g', Date.now())
      assert.equal((await other.accounts.getAccountByTokenHash('hash-g'))?.name, 'globex')
      assert.equal((await other.accounts.getAccountByTokenHash('hash-2'))?.name, 'acme')
    })

    it('revokes only a token in use; a missing account gets none', async () => {
      assert.equal(await stores.accounts.revokeToken('acme', Date.now()), true)
      assert.equal(await other.accounts.getAccountByTokenHash('hash-2'), undefined)
      assert.equal((await other.accounts.getAccountRecord('acme'))?.tokenCreatedAt, null)
      assert.equal(await stores.accounts.revokeToken('acme', Date.now()), false)
      assert.equal(await stores.accounts.revokeToken('nobody', Date.now()), false)
      assert.equal(await stores.accounts.replaceToken('nobody', 'hash-n', Date.now()), false)
      assert.equal(await other.accounts.getAccountByTokenHash('hash-n'), undefined)
      assert.equal((await other.accounts.getAccountByTokenHash('hash-g'))?.name, 'globex')
      const revokedAt = Date.now() + 60_000
      assert.equal(await stores.accounts.revokeToken('globex', revokedAt), true)
      // the last change to the account's tokens, made or revoked, is when its sessions end
      assert.equal((await other.accounts.getAccountRecord('globex'))?.tokensChangedAt?.getTime(), revokedAt)
      await stores.accounts.replaceToken('globex', 'hash-g2', Date.now())
    })

    it('racing replacements through two connections leave exactly one token in use', async () => {
      const hashes = Array.from({ length: 8 }, (_, i) => `race-${i}`)
      await Promise.all(
        hashes.map((hash, i) =>
          (i % 2 === 0 ? stores : other).accounts.replaceToken('acme', hash, Date.now()),
        ),
      )
      const found = await Promise.all(hashes.map((hash) => stores.accounts.getAccountByTokenHash(hash)))
      assert.equal(found.filter((account) => account !== undefined).length, 1)
    })
  })
}
