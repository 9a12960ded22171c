import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { exportSPKI, generateKeyPair, SignJWT } from 'jose'
import { InvalidJwtError } from '../errors/authErrors.ts'
import { type AccessPolicy, createAccessPolicy } from './accessPolicy.ts'
import { createJwtVerifier } from './createJwtVerifier.ts'
import { keySettingsSchema } from './keySettings.ts'

type JwtPolicy = AccessPolicy['jwt']

const dayS = 86_400
const first = await generateKeyPair('ES256')
const second = await generateKeyPair('ES256')
const firstPem = await exportSPKI(first.publicKey)
const secondPem = await exportSPKI(second.publicKey)

/** A fake clock at a whole second, moved by the tests. */
function clock(startMs = 1_800_000_000_000) {
  let nowMs = startMs
  return {
    now: () => nowMs,
    seconds: () => Math.floor(nowMs / 1000),
    set(ms: number) {
      nowMs = ms
    },
  }
}

/** The JWT part of a key's policy, compiled as the key registry does on every load. */
async function policy(jwt: { audience?: string; kids?: ('first' | 'second')[] } = {}): Promise<JwtPolicy> {
  const pems = { first: firstPem, second: secondPem }
  const settings = keySettingsSchema.parse({
    jwt: {
      ...(jwt.audience === undefined ? {} : { audience: jwt.audience }),
      publicKeys: (jwt.kids ?? ['first', 'second']).map((kid) => ({ kid, alg: 'ES256', pem: pems[kid] })),
    },
  })
  return (await createAccessPolicy(settings)).jwt
}

/** Counts the public key lookups: one per signature check, none for a remembered token. */
function counted(jwt: JwtPolicy): JwtPolicy & { lookups: number } {
  const counting = {
    ...jwt,
    lookups: 0,
    keys: {
      get: (kid: string) => {
        counting.lookups++
        return jwt.keys.get(kid)
      },
    } as JwtPolicy['keys'],
  }
  return counting
}

async function sign(
  claims: { exp?: number; iat?: number; aud?: string },
  kid: 'first' | 'second' = 'first',
): Promise<string> {
  const jwt = new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid })
  if (claims.exp !== undefined) jwt.setExpirationTime(claims.exp)
  if (claims.iat !== undefined) jwt.setIssuedAt(claims.iat)
  if (claims.aud !== undefined) jwt.setAudience(claims.aud)
  return jwt.sign(kid === 'first' ? first.privateKey : second.privateKey)
}

const refused = (err: unknown) => err instanceof InvalidJwtError && err.message === 'invalid JWT'

describe('createJwtVerifier: what it remembers', () => {
  it('a token is remembered for the policy object it was verified against, and only for it', async () => {
    const time = clock()
    const verify = createJwtVerifier({ maxLifetimeSeconds: dayS, now: time.now })
    const token = await sign({ exp: time.seconds() + 600 })
    const before = counted(await policy())
    const claims = await verify(token, before, 1)
    assert.equal(claims.expiresMs, (time.seconds() + 600) * 1000)
    await verify(token, before, 1)
    assert.equal(before.lookups, 1, 'the second call was answered from memory')

    // the registry reloads the key (any change): a new policy object, equal or not, checks again
    const reloaded = counted(await policy())
    await verify(token, reloaded, 1)
    assert.equal(reloaded.lookups, 1)
  })

  it('the public key that signed a remembered token removed: the token is refused at once', async () => {
    const time = clock()
    const verify = createJwtVerifier({ maxLifetimeSeconds: dayS, now: time.now })
    const token = await sign({ exp: time.seconds() + 600 }, 'first')
    await verify(token, await policy({ kids: ['first', 'second'] }), 7)
    await assert.rejects(verify(token, await policy({ kids: ['second'] }), 7), refused)
    // and the old verdict is gone for good, not waiting behind the new policy
    await assert.rejects(verify(token, await policy({ kids: ['second'] }), 7), refused)
  })

  it("the key's audience changed: a remembered token for the old one is refused", async () => {
    const time = clock()
    const verify = createJwtVerifier({ maxLifetimeSeconds: dayS, now: time.now })
    const token = await sign({ exp: time.seconds() + 600, aud: 'app-a' })
    await verify(token, await policy({ audience: 'app-a' }), 7)
    await assert.rejects(verify(token, await policy({ audience: 'app-b' }), 7), refused)
    // back to app-a: accepted again, so nothing but the audience refused it
    await verify(token, await policy({ audience: 'app-a' }), 7)
  })

  it('a remembered token is refused from its exp on, not a millisecond before', async () => {
    const time = clock()
    const verify = createJwtVerifier({ maxLifetimeSeconds: dayS, now: time.now })
    const exp = time.seconds() + 60
    const token = await sign({ exp })
    const jwt = await policy()
    await verify(token, jwt, 1)
    time.set(exp * 1000 - 1)
    await verify(token, jwt, 1)
    time.set(exp * 1000)
    await assert.rejects(verify(token, jwt, 1), refused)
  })
})

describe('createJwtVerifier: the longest lifetime', () => {
  it('exp at most maxLifetimeSeconds from now: at the edge accepted, a second past it refused', async () => {
    const time = clock()
    const verify = createJwtVerifier({ maxLifetimeSeconds: dayS, now: time.now })
    const jwt = await policy()
    await verify(await sign({ exp: time.seconds() + dayS }), jwt, 1)
    await assert.rejects(verify(await sign({ exp: time.seconds() + dayS + 1 }), jwt, 1), refused)
  })

  it('exp - iat at most maxLifetimeSeconds, even when exp is near', async () => {
    const time = clock()
    const verify = createJwtVerifier({ maxLifetimeSeconds: 3_600, now: time.now })
    const jwt = await policy()
    const exp = time.seconds() + 600
    await verify(await sign({ iat: exp - 3_600, exp }), jwt, 1)
    await assert.rejects(verify(await sign({ iat: exp - 3_601, exp }), jwt, 1), refused)
  })

  it('a token over the limit is refused whichever policy asks, and never remembered', async () => {
    const time = clock()
    const verify = createJwtVerifier({ maxLifetimeSeconds: 60, now: time.now })
    const jwt = await policy()
    const token = await sign({ exp: time.seconds() + 61 })
    await assert.rejects(verify(token, jwt, 1), refused)
    // a second later it would be within the limit: checked afresh, and accepted
    time.set(time.now() + 1_000)
    await verify(token, jwt, 1)
  })
})
