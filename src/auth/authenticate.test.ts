import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { exportSPKI, generateKeyPair, SignJWT } from 'jose'
import { InvalidJwtError, InvalidKeyError, InvalidSecretError } from '../errors/authErrors.ts'
import { AuthRateLimitError } from '../errors/limitErrors.ts'
import { createAccessPolicy } from './accessPolicy.ts'
import type { ApiKey } from './apiKey.ts'
import { type AuthenticateDeps, authenticate } from './authenticate.ts'
import { createAuthFailureLimiter } from './createAuthFailureLimiter.ts'
import { createJwtVerifier } from './createJwtVerifier.ts'
import type { KeyEntry } from './createKeyRegistry.ts'
import { createSecretVerifier } from './createSecretVerifier.ts'
import { hashSecret } from './hashSecret.ts'
import { keySettingsSchema } from './keySettings.ts'

const hashKey = Buffer.alloc(32, 1)
const secret = 'f'.repeat(32)
const { publicKey, privateKey } = await generateKeyPair('ES256')
const pem = await exportSPKI(publicKey)

async function entry(id: number, settings: Record<string, unknown>): Promise<KeyEntry> {
  const parsed = keySettingsSchema.parse(settings)
  return {
    apiKey: { id, key: `key${id}`, settings: parsed } as ApiKey,
    subject: {} as KeyEntry['subject'],
    failoverAllowed: false,
    access: await createAccessPolicy(parsed),
  }
}

/** Real verifiers, counting how often a secret was checked at all. */
function deps(burst = 3) {
  const verifier = createSecretVerifier({ hashKey, store: { replaceSecretHash: async () => true } })
  const counted: AuthenticateDeps & { secretChecks: number } = {
    secretChecks: 0,
    verifySecret: (...args) => {
      counted.secretChecks++
      return verifier(...args)
    },
    verifyJwt: createJwtVerifier({ maxLifetimeSeconds: 86_400 }),
    authFailures: createAuthFailureLimiter({ burst, perMinute: 1, now: () => 0 }),
  }
  return counted
}

const basic = (password: string, user = '') =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
const from = (authorization: string | undefined, clientAddress = '10.0.0.1') => ({
  authorization,
  clientAddress,
})

describe('authenticate: failed authentications', () => {
  it('after `burst` wrong secrets the address gets 429 without its secret being checked, even the right one', async () => {
    const key = await entry(1, { secretHash: hashSecret(secret, hashKey) })
    const d = deps(3)
    for (let i = 0; i < 3; i++) {
      await assert.rejects(authenticate(key, from(basic('wrong')), d), InvalidSecretError)
    }
    assert.equal(d.secretChecks, 3)
    await assert.rejects(authenticate(key, from(basic(secret)), d), (err: unknown) => {
      assert.ok(err instanceof AuthRateLimitError)
      assert.equal(err.httpStatus, 429)
      assert.equal(err.retryAfterSeconds, 60, 'one attempt a minute comes back')
      return true
    })
    assert.equal(d.secretChecks, 3, 'nothing hashed')
    const other = await authenticate(key, from(basic(secret), '10.0.0.2'), d)
    assert.equal(
      other.secretVerified,
      true,
      'another address with the right secret: the owner is not locked out',
    )
  })

  it('wrong JWTs count too', async () => {
    const key = await entry(2, { jwt: { publicKeys: [{ kid: 'a', alg: 'ES256', pem }] } })
    const d = deps(2)
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'a' })
      .setExpirationTime(1)
      .sign(privateKey)
    await assert.rejects(authenticate(key, from(`Bearer ${expired}`), d), InvalidJwtError)
    await assert.rejects(authenticate(key, from('Bearer not.a.jwt'), d), InvalidJwtError)
    await assert.rejects(authenticate(key, from('Bearer not.a.jwt'), d), AuthRateLimitError)
    const good = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'a' })
      .setExpirationTime('1h')
      .sign(privateKey)
    await assert.rejects(authenticate(key, from(`Bearer ${good}`), d), AuthRateLimitError, 'not verified')
    assert.ok((await authenticate(key, from(`Bearer ${good}`, '10.0.0.9'), d)).claims)
  })

  it('a request that presents no credential is neither counted nor refused for failures', async () => {
    const key = await entry(3, { secretHash: hashSecret(secret, hashKey), requireSecret: true })
    const d = deps(1)
    for (let i = 0; i < 3; i++) {
      await assert.rejects(authenticate(key, from(undefined), d), InvalidKeyError)
      await assert.rejects(authenticate(key, from(basic('')), d), InvalidKeyError)
    }
    assert.equal(d.secretChecks, 0)
    assert.equal((await authenticate(key, from(basic(secret)), d)).secretVerified, true)
  })
})

/** The error a request gets, by its class and wire message: what a stranger sees of it. */
async function refusalOf(key: KeyEntry, authorization: string | undefined, d = deps(100)) {
  try {
    await authenticate(key, from(authorization), d)
  } catch (err) {
    assert.ok(err instanceof Error)
    return `${err.name}: ${err.message}`
  }
  return 'admitted'
}

describe('authenticate: strangers', () => {
  it('a key that requires a JWT answers a request without one as an unknown key; its own secret hears why', async () => {
    const jwtKey = await entry(4, {
      secretHash: hashSecret(secret, hashKey),
      jwt: { required: true, publicKeys: [{ kid: 'a', alg: 'ES256', pem }] },
    })
    // an unknown key is authenticated as a key that requires its secret and has none (authorizeKeyRequest)
    const unknown = await entry(5, { requireSecret: true })
    const foreign = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'a' })
      .setExpirationTime('1h')
      .sign((await generateKeyPair('ES256')).privateKey)
    const strangers = (key: string) => [
      undefined,
      basic(''),
      basic('', key),
      basic('wrong'),
      basic('wrong', key),
      basic('', 'bob'),
      'Bearer not.a.jwt',
      `Bearer ${foreign}`,
      'Digest whatever',
    ]
    const unknownAsks = strangers('key5')
    for (const [index, authorization] of strangers('key4').entries()) {
      assert.equal(
        await refusalOf(jwtKey, authorization),
        await refusalOf(unknown, unknownAsks[index]),
        String(authorization),
      )
    }
    assert.equal(await refusalOf(jwtKey, undefined), 'InvalidKeyError: invalid project id')
    assert.equal(await refusalOf(jwtKey, basic(secret)), 'InvalidJwtError: invalid JWT')
  })

  it('a secret sent to a key without one is checked all the same, against a hash no secret has', async () => {
    const d = deps(100)
    for (const key of [await entry(6, {}), await entry(7, { requireSecret: true })]) {
      await assert.rejects(authenticate(key, from(basic(secret)), d), InvalidSecretError)
    }
    assert.equal(d.secretChecks, 2, 'one HMAC each, as for a key with a secret')
  })
})
