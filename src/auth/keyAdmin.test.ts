import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { storeBackends } from '../../test/helpers/storeBackends.ts'
import { loadConfig } from '../config/loadConfig.ts'
import { AllowlistEntryError, KeyAdminError } from '../errors/adminErrors.ts'
import { createKeyAdmin } from './keyAdmin.ts'

for (const backend of storeBackends)
  describe(`keyAdmin allowlists on ${backend.name}`, async () => {
    const database = await backend.createDatabase()
    after(() => database.remove())
    const store = (await database.open()).keys
    const admin = createKeyAdmin(store, loadConfig(undefined).plans)

    it('refuses a method the gateway does not offer, and stores nothing of that call', async () => {
      const { key } = await admin.create({})
      await assert.rejects(
        admin.addAllowlistEntries(key.key, 'methods', ['eth_chainId', 'not_a_method']),
        (err: Error) => err instanceof AllowlistEntryError && /'not_a_method'/.test(err.message),
      )
      assert.deepEqual((await admin.show(key.key)).settings.allowlists.methods, [])
      const added = await admin.addAllowlistEntries(key.key, 'methods', ['eth_chainId', 'eth_call'])
      assert.deepEqual(added.settings.allowlists.methods, ['eth_chainId', 'eth_call'])
    })

    it('refuses a long or spoofing key or account name, and stores nothing', async () => {
      const before = (await store.listKeys()).length
      await assert.rejects(admin.create({ name: 'n'.repeat(101) }), KeyAdminError)
      await assert.rejects(admin.create({ name: 'invoice\u202Efdp.exe' }), /U\+202E/)
      await assert.rejects(
        admin.create({ account: 'acme\u0000' }),
        /the account name may not contain U\+0000/,
      )
      assert.equal((await store.listKeys()).length, before)
      const { key } = await admin.create({ name: 'n'.repeat(100), account: `spool-${'a'.repeat(94)}` })
      assert.equal(key.name, 'n'.repeat(100))
    })

    it('an entry stored before the check existed can still be removed', async () => {
      const { key } = await admin.create({})
      const settings = structuredClone(key.settings)
      settings.allowlists.methods = ['not_a_method', 'eth_chainId']
      assert.equal(await store.updateKeySettings(key.key, settings), true)
      const removed = await admin.removeAllowlistEntries(key.key, 'methods', ['not_a_method'])
      assert.deepEqual(removed.settings.allowlists.methods, ['eth_chainId'])
      await assert.rejects(
        admin.removeAllowlistEntries(key.key, 'methods', ['another_bad_one']),
        /'another_bad_one' is not a method tollgate offers/,
      )
    })
  })
