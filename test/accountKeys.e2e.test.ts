import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout } from 'node:timers/promises'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const adminToken = 'account-keys-admin-token'

type KeyView = { key: string; name: string; account: string; hasSecret: boolean; requireSecret: boolean }

/**
 * A key holder's own key management through a real gateway, signed in as the portal is (the session
 * cookie and its CSRF token): what they do takes effect on the JSON-RPC path, and another account's
 * key answers as a missing one.
 */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`account keys on ${backend}`, () => {
    let node: TestNode
    let gateway: TestGateway
    let schema: TestSchema | undefined
    let cookie = ''
    let csrfToken = ''
    let rivalKey = ''

    const admin = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${gateway.url}/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      return (await response.json()) as Record<string, unknown>
    }
    // as a script should, it waits when the API says so: an account's requests are limited (20 a
    // second on a gateway), which a fast run of these tests can pass
    const account = async (method: string, path: string, body?: unknown, csrf = csrfToken) => {
      for (;;) {
        const response = await fetch(`${gateway.url}/account/api${path}`, {
          method,
          headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        })
        const json = (await response.json()) as unknown
        if (response.status !== 429) return { status: response.status, headers: response.headers, json }
        await setTimeout(Number(response.headers.get('retry-after')) * 1_000)
      }
    }
    const rpc = (key: string, headers: Record<string, string> = {}) =>
      postJson(`${gateway.url}/v3/${key}`, rpcBody('eth_chainId'), {
        'content-type': 'application/json',
        ...headers,
      })
    const withSecret = (secret: string) => ({
      authorization: `Basic ${Buffer.from(`:${secret}`).toString('base64')}`,
    })

    before(async () => {
      node = await startTestNode({ loadBlocks: 1 })
      schema = backend === 'postgres' ? await createTestSchema() : undefined
      gateway = await startTestGateway({
        upstreams: [node.url],
        config: { admin: { token: adminToken }, ...(schema ? { storage: { postgres: schema.url } } : {}) },
      })
      await admin('POST', '/keys', { account: 'acme', plan: 'developer', name: 'web' })
      rivalKey = (await admin('POST', '/keys', { account: 'globex', plan: 'developer', name: 'app' }))
        .key as string
      const { token } = (await admin('POST', '/accounts/acme/token')) as { token: string }
      const signedIn = await fetch(`${gateway.url}/account/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token }),
      })
      assert.equal(signedIn.status, 200)
      const setCookie = signedIn.headers.get('set-cookie') ?? ''
      assert.match(
        setCookie,
        /^tollgate_account_session=[^;]+; Path=\/account; Max-Age=43200; HttpOnly; SameSite=Lax$/,
      )
      cookie = setCookie.split(';')[0] as string
      csrfToken = ((await signedIn.json()) as { csrfToken: string }).csrfToken
    })
    after(async () => {
      await gateway?.close()
      await schema?.drop()
      await node?.stop()
    })

    it('a key made in the portal answers calls with its secret; a rotated secret replaces it; revoked, it stops', async () => {
      const made = await account('POST', '/keys', { name: 'backend', secret: true })
      assert.equal(made.status, 201)
      const { key, secret, account: owner } = made.json as KeyView & { secret: string }
      assert.equal(owner, 'acme')
      await gateway.app.keys.refresh()
      assert.equal((await rpc(key)).status, 200)
      assert.equal((await account('PATCH', `/keys/${key}`, { requireSecret: true })).status, 200)
      await gateway.app.keys.refresh()
      assert.equal((await rpc(key)).status, 401)
      assert.equal((await rpc(key, withSecret(secret))).status, 200)

      const rotated = await account('POST', `/keys/${key}/rotate-secret`)
      const next = (rotated.json as { secret: string }).secret
      assert.notEqual(next, secret)
      await gateway.app.keys.refresh()
      assert.equal((await rpc(key, withSecret(secret))).status, 401)
      assert.equal((await rpc(key, withSecret(next))).status, 200)

      // the right secret skips the allowlists: they hold for calls without one
      assert.equal((await account('PATCH', `/keys/${key}`, { requireSecret: false })).status, 200)
      const allowed = await account('POST', `/keys/${key}/allowlists/origins`, {
        entries: ['https://app.example.com'],
      })
      assert.deepEqual(
        [allowed.status, (allowed.json as { origins: string[] }).origins],
        [200, ['https://app.example.com']],
      )
      await gateway.app.keys.refresh()
      assert.equal((await rpc(key, { origin: 'https://evil.example' })).status, 403)
      assert.equal((await rpc(key, { origin: 'https://app.example.com' })).status, 200)

      assert.equal((await account('DELETE', `/keys/${key}`)).status, 200)
      await gateway.app.keys.refresh()
      assert.equal((await rpc(key, withSecret(next))).status, 401)
    })

    it('a change without the CSRF token is refused 403; the plan’s keys per account hold', async () => {
      const refused = await account('POST', '/keys', { name: 'x' }, 'wrong')
      assert.equal(refused.status, 403)
      const names = () =>
        account('GET', '/keys').then(({ json }) => (json as { keys: KeyView[] }).keys.map((key) => key.name))
      const before = await names()
      assert.ok(!before.includes('x'))
      let made = 0
      for (let i = 0; i < 6; i++)
        if ((await account('POST', '/keys', { name: `k${i}` })).status === 201) made++
      // developer: 5 keys per account, revoked ones counted as the store counts them
      const after = await names()
      assert.equal((await account('POST', '/keys', { name: 'over' })).status, 409)
      assert.equal(after.length, before.length + made)
    })

    it('another account’s key is answered as a missing one and left as it was', async () => {
      const missing = 'e'.repeat(32)
      for (const [method, path, body] of [
        ['GET', ''],
        ['DELETE', ''],
        ['POST', '/rotate-secret'],
        ['POST', '/allowlists/origins', { entries: ['example.com'] }],
      ] as const) {
        const theirs = await account(method, `/keys/${rivalKey}${path}`, body)
        const none = await account(method, `/keys/${missing}${path}`, body)
        assert.deepEqual(
          [theirs.status, theirs.json],
          [404, { error: { message: 'no active key with that value' } }],
        )
        assert.deepEqual([none.status, none.json], [theirs.status, theirs.json])
      }
      const shown = (await admin('GET', `/keys/${rivalKey}`)) as {
        status: string
        allowlists: { origins: string[] }
      }
      assert.equal(shown.status, 'active')
      assert.deepEqual(shown.allowlists.origins, [])
      await gateway.app.keys.refresh()
      assert.equal((await rpc(rivalKey)).status, 200)
    })
  })
}
