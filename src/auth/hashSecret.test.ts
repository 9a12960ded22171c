import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { storeBackends } from '../../test/helpers/storeBackends.ts'
import { generateSecret, getSecretHashKey, hashSecret, matchesSecretHash } from './hashSecret.ts'

const hashKey = Buffer.alloc(32, 7)

describe('hashSecret', () => {
  it('a secret is 32 hex characters (128 bits), a new one each time', () => {
    const secret = generateSecret()
    assert.match(secret, /^[0-9a-f]{32}$/)
    assert.notEqual(generateSecret(), secret)
  })

  it('stores an HMAC-SHA-256 under its prefix; only the same secret under the same key matches', () => {
    const secret = generateSecret()
    const stored = hashSecret(secret, hashKey)
    assert.match(stored, /^hmac-sha256\$[A-Za-z0-9_-]{43}$/)
    assert.equal(hashSecret(secret, hashKey), stored, 'deterministic: no salt is needed for random secrets')
    assert.equal(matchesSecretHash(secret, stored, hashKey), true)
    assert.equal(matchesSecretHash(`${secret}x`, stored, hashKey), false)
    assert.equal(matchesSecretHash(secret.slice(1), stored, hashKey), false)
    assert.equal(matchesSecretHash('', stored, hashKey), false)
    assert.equal(matchesSecretHash(secret, stored, Buffer.alloc(32, 8)), false, 'another database')
  })

  it('refuses anything that is not a whole hmac-sha256 hash', () => {
    const secret = generateSecret()
    const stored = hashSecret(secret, hashKey)
    assert.equal(matchesSecretHash(secret, stored.slice(0, -4), hashKey), false, 'truncated')
    assert.equal(matchesSecretHash(secret, stored.replace('hmac-sha256', 'sha256'), hashKey), false)
    assert.equal(matchesSecretHash(secret, 'hmac-sha256$', hashKey), false)
  })

  for (const backend of storeBackends) {
    it(`the hash key is made once per database: processes on one ${backend.name} database agree`, async () => {
      const database = await backend.createDatabase()
      try {
        const storeA = (await database.open()).keys
        const storeB = (await database.open()).keys
        const [a, b] = await Promise.all([getSecretHashKey(storeA), getSecretHashKey(storeB)])
        assert.equal(a.length, 32)
        assert.deepEqual(b, a)
        assert.deepEqual(await getSecretHashKey(storeA), a)
        assert.equal(await storeB.ensureMeta('some_name', 'one'), 'one')
        assert.equal(await storeA.ensureMeta('some_name', 'two'), 'one', 'the first value stays')
      } finally {
        await database.remove()
      }
    })
  }
})
