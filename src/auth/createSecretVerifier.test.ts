import assert from 'node:assert/strict'
import { randomBytes, scryptSync } from 'node:crypto'
import { after, describe, it } from 'node:test'
import { storeBackends } from '../../test/helpers/storeBackends.ts'
import { loadConfig } from '../config/loadConfig.ts'
import { createSecretVerifier } from './createSecretVerifier.ts'
import { getSecretHashKey, matchesSecretHash } from './hashSecret.ts'
import { createKeyAdmin } from './keyAdmin.ts'

/** A hash as tollgate stored them before HMACs (cheaper parameters than it used, for speed). */
function scryptHash(secret: string, N = 2 ** 10): string {
  const salt = randomBytes(16)
  const hash = scryptSync(secret, salt, 32, { N, r: 8, p: 1 })
  return ['scrypt', N, 8, 1, salt.toString('base64'), hash.toString('base64')].join('$')
}

for (const backend of storeBackends)
  describe(`createSecretVerifier on ${backend.name}`, async () => {
    const database = await backend.createDatabase()
    after(() => database.remove())
    const store = (await database.open()).keys
    const admin = createKeyAdmin(store, loadConfig(undefined).plans)

    /** A key whose stored secret hash is `secretHash`, as an older tollgate would have left it. */
    async function keyWithHash(secretHash: string): Promise<string> {
      const { key } = await admin.create({})
      assert.equal(await store.updateKeySettings(key.key, { ...key.settings, secretHash }), true)
      return key.key
    }
    const storedHash = async (key: string) => (await store.getKey(key))?.settings.secretHash

    it('checks keyAdmin-made secrets against their HMAC', async () => {
      const verify = createSecretVerifier({ hashKey: await getSecretHashKey(store), store })
      const { key, secret } = await admin.create({ secret: true })
      assert.ok(secret && key.settings.secretHash)
      assert.match(key.settings.secretHash, /^hmac-sha256\$/)
      assert.equal(await verify(secret, key.key, key.settings.secretHash), true)
      assert.equal(await verify(`${secret}0`, key.key, key.settings.secretHash), false)
      const rotated = await admin.rotateSecret(key.key)
      const rotatedHash = rotated.key.settings.secretHash as string
      assert.equal(await verify(secret, key.key, rotatedHash), false, 'the old secret')
      assert.equal(await verify(rotated.secret, key.key, rotatedHash), true)
    })

    it('a legacy scrypt hash: a wrong secret changes nothing; the right one passes and is stored as an HMAC', async () => {
      const hashKey = await getSecretHashKey(store)
      const verify = createSecretVerifier({ hashKey, store })
      const secret = randomBytes(16).toString('hex')
      const legacy = scryptHash(secret)
      const key = await keyWithHash(legacy)

      assert.equal(await verify(`${secret}x`, key, legacy), false)
      assert.equal(await storedHash(key), legacy, 'a wrong secret writes nothing')

      assert.equal(await verify(secret, key, legacy), true)
      const upgraded = await storedHash(key)
      assert.match(upgraded ?? '', /^hmac-sha256\$/)
      assert.equal(matchesSecretHash(secret, upgraded as string, hashKey), true)
      assert.equal(await verify(secret, key, upgraded as string), true, 'the new hash verifies')

      // until the registry reloads, requests still carry the scrypt hash: still right, still wrong
      assert.equal(await verify(secret, key, legacy), true)
      assert.equal(await verify(`${secret}x`, key, legacy), false)
    })

    it('a rotation between the check and the write wins: the new secret is not overwritten', async () => {
      const verify = createSecretVerifier({ hashKey: await getSecretHashKey(store), store })
      const secret = randomBytes(16).toString('hex')
      const legacy = scryptHash(secret)
      const key = await keyWithHash(legacy)
      const rotated = await admin.rotateSecret(key)
      // a gateway that has not reloaded the key yet still checks against the old hash
      assert.equal(await verify(secret, key, legacy), true)
      assert.equal(await storedHash(key), rotated.key.settings.secretHash)
    })

    it('a failed write is logged, and the right secret still passes', async () => {
      const errors: unknown[] = []
      const verify = createSecretVerifier({
        hashKey: await getSecretHashKey(store),
        store: {
          replaceSecretHash: () => Promise.reject(new Error('database is locked')),
        },
        onError: (err) => errors.push(err),
      })
      const secret = randomBytes(16).toString('hex')
      assert.equal(await verify(secret, 'some-key', scryptHash(secret)), true)
      assert.equal(errors.length, 1)
    })

    it('an unknown or malformed scheme never matches', async () => {
      const verify = createSecretVerifier({ hashKey: await getSecretHashKey(store), store })
      const secret = randomBytes(16).toString('hex')
      for (const stored of ['', secret, `sha256$${secret}`, 'scrypt$1024$8$1$$', 'scrypt$']) {
        assert.equal(await verify(secret, 'some-key', stored), false, stored)
      }
    })
  })
