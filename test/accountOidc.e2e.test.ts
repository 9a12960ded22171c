import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { oidcStateMacKey, openOidcState, sealOidcState } from '../src/accounts/oidcStateCookie.ts'
import { getSecretHashKey } from '../src/auth/hashSecret.ts'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { freePort } from './helpers/localProcesses.ts'
import { startOidcProvider, type TestOidcProvider } from './helpers/startOidcProvider.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

/** The claim the gateway reads, and the provider's people: a string, a list, a list naming two accounts, no account. */
const claim = 'tollgate_account'
const people = {
  alice: { [claim]: 'acme' },
  bob: { [claim]: ['staff', 'globex'] },
  eve: { [claim]: ['acme', 'globex'] },
  mallory: { [claim]: 'nobody' },
  trent: {},
}

/**
 * Cookies as a browser keeps them for 127.0.0.1 (one jar for every port, as browsers do): each
 * with its path, sent to the requests under it.
 */
class CookieJar {
  readonly cookies = new Map<string, { value: string; path: string }>()

  header(url: URL): string {
    return [...this.cookies]
      .filter(([, cookie]) => url.pathname.startsWith(cookie.path))
      .map(([name, cookie]) => `${name}=${cookie.value}`)
      .join('; ')
  }

  keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim())
      const at = pair.indexOf('=')
      const name = pair.slice(0, at)
      const path = attributes.find((each) => /^path=/i.test(each))?.slice(5) ?? '/'
      if (/max-age=0\b/i.test(line) || pair.slice(at + 1) === '') this.cookies.delete(name)
      else this.cookies.set(name, { value: pair.slice(at + 1), path })
    }
  }

  async fetch(url: URL | string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url)
    const cookie = this.header(target)
    const response = await fetch(target, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) },
    })
    this.keep(response)
    return response
  }
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`sign-in to an account through an identity provider, on ${backend}`, () => {
    let node: TestNode
    let provider: TestOidcProvider
    let schema: TestSchema | undefined
    /** Two instances on one database, as behind a load balancer: `first` is the public address. */
    let first: TestGateway
    let second: TestGateway
    let redirectUrl: string

    before(async () => {
      node = await startTestNode()
      schema = backend === 'postgres' ? await createTestSchema() : undefined
      const port = await freePort()
      redirectUrl = `http://127.0.0.1:${port}/account/api/oidc/callback`
      provider = await startOidcProvider({ redirectUrl, people, scope: 'tollgate' })
      const oidc = {
        issuer: provider.issuer,
        clientId: provider.clientId,
        clientSecret: provider.clientSecret,
        redirectUrl,
        claim,
        scopes: ['tollgate'],
      }
      first = await startTestGateway({
        upstreams: [node.url],
        config: {
          server: { host: '127.0.0.1', port },
          accounts: { oidc },
          ...(schema ? { storage: { postgres: schema.url } } : {}),
        },
      })
      // one SQLite file has one gateway: there the second instance is the first one, restarted
      second = schema
        ? await startTestGateway({
            upstreams: [node.url],
            config: { accounts: { oidc }, storage: { postgres: schema.url } },
          })
        : first
      await first.app.keyAdmin.create({ account: 'acme', plan: 'developer', name: 'web' })
      await first.app.keyAdmin.create({ account: 'globex', plan: 'developer', name: 'app' })
    })
    after(async () => {
      if (second !== first) await second?.close()
      await first?.close()
      await provider?.close()
      await schema?.drop()
      await node?.stop()
    })

    /**
     * Starts a sign-in at the first instance and signs in at the provider as `login` (its login and
     * consent pages, as a person would submit them): the callback URL the provider sends the browser
     * to, not yet opened.
     */
    async function signInAtProvider(jar: CookieJar, login: string): Promise<URL> {
      const started = await jar.fetch(`${first.url}/account/api/oidc/start`)
      assert.equal(started.status, 302)
      let next = new URL(started.headers.get('location') as string)
      for (let step = 0; step < 12; step++) {
        if (next.href.startsWith(redirectUrl)) return next
        const page = await jar.fetch(next)
        if (page.status >= 300 && page.status < 400) {
          next = new URL(page.headers.get('location') as string, next)
          continue
        }
        const html = await page.text()
        assert.equal(page.status, 200, html)
        const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1] as string
        const form = html.includes('name="login"')
          ? { prompt: 'login', login, password: 'any' }
          : { prompt: 'consent' }
        const submitted = await jar.fetch(new URL(action, next), {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(form).toString(),
        })
        assert.ok(submitted.status >= 300 && submitted.status < 400, `form answered ${submitted.status}`)
        next = new URL(submitted.headers.get('location') as string, next)
      }
      throw new Error('the provider never sent the browser back')
    }

    /** The callback opened at `gateway` (any instance: the state travels in the cookie). */
    const openCallback = (jar: CookieJar, callback: URL, gateway: TestGateway) =>
      jar.fetch(new URL(`${callback.pathname}${callback.search}`, gateway.url))

    const session = async (jar: CookieJar, gateway: TestGateway) =>
      (await (await jar.fetch(`${gateway.url}/account/api/session`)).json()) as Record<string, unknown>

    const errorOf = async (response: Response) =>
      ((await response.json()) as { error: { message: string } }).error.message

    it('start: a redirect to the provider with a PKCE S256 challenge, state and nonce, all kept in a signed cookie for the callback only', async () => {
      const jar = new CookieJar()
      const started = await jar.fetch(`${first.url}/account/api/oidc/start`)
      assert.equal(started.status, 302)
      const location = new URL(started.headers.get('location') as string)
      assert.equal(location.origin, provider.issuer)
      assert.equal(location.searchParams.get('response_type'), 'code')
      assert.equal(location.searchParams.get('client_id'), provider.clientId)
      assert.equal(location.searchParams.get('redirect_uri'), redirectUrl)
      assert.deepEqual(location.searchParams.get('scope')?.split(' '), ['openid', 'tollgate'])
      assert.equal(location.searchParams.get('code_challenge_method'), 'S256')
      const setCookie = started.headers.getSetCookie()[0] as string
      assert.match(
        setCookie,
        /^tollgate_oidc=[^;]+; Path=\/account\/api\/oidc; Max-Age=600; HttpOnly; SameSite=Lax$/,
      )
      const macKey = oidcStateMacKey(await getSecretHashKey(first.app.keyStore))
      const pending = openOidcState(jar.cookies.get('tollgate_oidc')?.value, macKey, Date.now())
      assert.ok(pending, 'the cookie holds the pending sign-in under the MAC')
      assert.equal(location.searchParams.get('state'), pending.state)
      assert.equal(location.searchParams.get('nonce'), pending.nonce)
      const challenge = createHash('sha256').update(pending.codeVerifier).digest('base64url')
      assert.equal(location.searchParams.get('code_challenge'), challenge)
    })

    it("signs in to the account the person's claim names, on another instance than the one that started it (or after a restart); the session works on both", async () => {
      const jar = new CookieJar()
      assert.deepEqual(await session(jar, first), { signedIn: false, oidc: true })
      const callback = await signInAtProvider(jar, 'alice')
      // nothing of the sign-in is kept in the instance that started it
      if (second === first) await first.restart()
      const landed = await openCallback(jar, callback, second)
      assert.equal(landed.status, 302, await landed.clone().text())
      assert.equal(landed.headers.get('location'), '/account/')
      const [sessionCookie, stateCookie, ...more] = landed.headers.getSetCookie()
      assert.match(sessionCookie ?? '', /^tollgate_account_session=.+; Path=\/account;/)
      // the spent state cookie is cleared
      assert.match(
        stateCookie ?? '',
        /^tollgate_oidc=; Path=\/account\/api\/oidc; Max-Age=0; HttpOnly; SameSite=Lax$/,
      )
      assert.deepEqual(more, [])
      assert.equal(jar.cookies.has('tollgate_oidc'), false)
      for (const gateway of [first, second]) {
        const answer = await session(jar, gateway)
        assert.equal(answer.signedIn, true)
        assert.equal(answer.account, 'acme')
      }
      const keys = (await (await jar.fetch(`${first.url}/account/api/keys`)).json()) as {
        account: string
        keys: { name: string }[]
      }
      assert.equal(keys.account, 'acme')
      assert.deepEqual(
        keys.keys.map((key) => key.name),
        ['web'],
      )
    })

    it('a list claim: the one value that names an account signs in to it', async () => {
      const jar = new CookieJar()
      const landed = await openCallback(jar, await signInAtProvider(jar, 'bob'), first)
      assert.equal(landed.status, 302)
      assert.equal((await session(jar, first)).account, 'globex')
    })

    it('the same callback again is refused: the code is spent at the provider, and no session is made', async () => {
      const jar = new CookieJar()
      const callback = await signInAtProvider(jar, 'alice')
      const stateCookie = jar.cookies.get('tollgate_oidc')?.value as string
      assert.equal((await openCallback(jar, callback, first)).status, 302)
      // an attacker who saw the URL and the state cookie, in a browser of their own
      const replay = new CookieJar()
      replay.cookies.set('tollgate_oidc', { value: stateCookie, path: '/account/api/oidc' })
      const replayed = await openCallback(replay, callback, second)
      assert.equal(replayed.status, 401)
      assert.equal(await errorOf(replayed), "the identity provider's answer failed its checks: start again")
      assert.equal(replay.cookies.has('tollgate_account_session'), false)
      assert.equal((await session(replay, first)).signedIn, false)
    })

    it('a callback without its state cookie, with a tampered cookie or another state is refused (400), and the code is not exchanged', async () => {
      const jar = new CookieJar()
      const callback = await signInAtProvider(jar, 'alice')
      const stateCookie = jar.cookies.get('tollgate_oidc')?.value as string
      const expected = 'this sign-in was not started in this browser, or took too long: start again'
      const attempts: [string, (into: CookieJar) => URL][] = [
        ['no cookie', () => callback],
        [
          'a cookie with one character changed',
          (into) => {
            const changed = `${stateCookie.slice(0, 5)}${stateCookie[5] === 'A' ? 'B' : 'A'}${stateCookie.slice(6)}`
            into.cookies.set('tollgate_oidc', { value: changed, path: '/account/api/oidc' })
            return callback
          },
        ],
        [
          'another state in the callback',
          (into) => {
            into.cookies.set('tollgate_oidc', { value: stateCookie, path: '/account/api/oidc' })
            const other = new URL(callback)
            other.searchParams.set('state', 'x'.repeat(43))
            return other
          },
        ],
      ]
      for (const [what, prepare] of attempts) {
        const other = new CookieJar()
        const refused = await openCallback(other, prepare(other), first)
        assert.equal(refused.status, 400, what)
        assert.equal(await errorOf(refused), expected, what)
        assert.equal(other.cookies.has('tollgate_account_session'), false, what)
      }
      // none of them spent the code: the browser that started the sign-in still finishes it
      assert.equal((await openCallback(jar, callback, first)).status, 302)
      assert.equal((await session(jar, first)).account, 'acme')
    })

    it('PKCE: the provider refuses a code exchanged with another verifier, and an authorization request without a challenge', async () => {
      const jar = new CookieJar()
      const callback = await signInAtProvider(jar, 'alice')
      const macKey = oidcStateMacKey(await getSecretHashKey(first.app.keyStore))
      const pending = openOidcState(jar.cookies.get('tollgate_oidc')?.value, macKey, Date.now())
      assert.ok(pending)
      // signed with the gateway's own key: only the verifier is wrong
      const forged = sealOidcState({ ...pending, codeVerifier: 'v'.repeat(43) }, macKey)
      jar.cookies.set('tollgate_oidc', { value: forged, path: '/account/api/oidc' })
      const refused = await openCallback(jar, callback, first)
      assert.equal(refused.status, 401)
      assert.equal((await session(jar, first)).signedIn, false)
      const plain = new URL(`${provider.issuer}/auth`)
      for (const [name, value] of Object.entries({
        client_id: provider.clientId,
        response_type: 'code',
        scope: 'openid',
        redirect_uri: redirectUrl,
        state: 's'.repeat(43),
      }))
        plain.searchParams.set(name, value)
      const without = await fetch(plain, { redirect: 'manual' })
      const back = new URL(without.headers.get('location') as string)
      assert.equal(back.searchParams.get('error'), 'invalid_request')
      assert.match(back.searchParams.get('error_description') ?? '', /requires PKCE/)
    })

    it('a person whose claim names no account, names two, or who has no such claim is refused (403) and nothing is made', async () => {
      const cases = [
        [
          'mallory',
          "no account matches your identity: the gateway's operator names your account in your 'tollgate_account' claim",
        ],
        [
          'trent',
          "no account matches your identity: the gateway's operator names your account in your 'tollgate_account' claim",
        ],
        [
          'eve',
          "your 'tollgate_account' claim names more than one account: the gateway's operator leaves one",
        ],
      ] as const
      for (const [login, message] of cases) {
        const jar = new CookieJar()
        const refused = await openCallback(jar, await signInAtProvider(jar, login), second)
        assert.equal(refused.status, 403, login)
        assert.equal(await errorOf(refused), message, login)
        assert.equal(jar.cookies.has('tollgate_account_session'), false, login)
        // the spent state cookie is cleared
        assert.equal(jar.cookies.has('tollgate_oidc'), false, login)
      }
      assert.equal(await first.app.keyStore.getAccount('nobody'), undefined)
      assert.equal(await first.app.keyStore.getAccount('staff'), undefined)
    })

    it('a person who cancels at the provider is told the provider did not sign them in (401)', async () => {
      const jar = new CookieJar()
      const started = await jar.fetch(`${first.url}/account/api/oidc/start`)
      let next = new URL(started.headers.get('location') as string)
      while (!next.pathname.startsWith('/interaction/')) {
        next = new URL((await jar.fetch(next)).headers.get('location') as string, next)
      }
      // the development login page's "cancel" link
      let page = await jar.fetch(new URL(`${next.pathname}/abort`, next))
      next = new URL(page.headers.get('location') as string, next)
      while (!next.href.startsWith(redirectUrl)) {
        page = await jar.fetch(next)
        next = new URL(page.headers.get('location') as string, next)
      }
      assert.equal(next.searchParams.get('error'), 'access_denied')
      const refused = await openCallback(jar, next, first)
      assert.equal(refused.status, 401)
      assert.equal(await errorOf(refused), 'the identity provider did not sign you in')
    })
  })
}

describe('sign-in through an identity provider that cannot be reached', () => {
  let node: TestNode
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode()
    const closed = await freePort()
    gateway = await startTestGateway({
      upstreams: [node.url],
      config: {
        accounts: {
          oidc: {
            issuer: `http://127.0.0.1:${closed}`,
            clientId: 'tollgate',
            redirectUrl: 'https://tollgate.example/account/api/oidc/callback',
          },
        },
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  it('start answers 502 and the gateway serves on; without accounts.oidc the routes are not found', async () => {
    for (let i = 0; i < 2; i++) {
      const answer = await fetch(`${gateway.url}/account/api/oidc/start`, { redirect: 'manual' })
      assert.equal(answer.status, 502)
      assert.deepEqual(await answer.json(), {
        error: { message: 'the identity provider cannot be reached: try again later' },
      })
    }
    assert.equal((await fetch(`${gateway.url}/healthz`)).status, 200)
    const other = await startTestGateway({ upstreams: [node.url] })
    try {
      assert.equal((await fetch(`${other.url}/account/api/oidc/start`, { redirect: 'manual' })).status, 404)
      const session = (await (await fetch(`${other.url}/account/api/session`)).json()) as { oidc: boolean }
      assert.equal(session.oidc, false)
    } finally {
      await other.close()
    }
  })
})
