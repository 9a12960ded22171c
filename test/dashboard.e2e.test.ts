import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { parse, stringify } from 'yaml'
import { loadConfig } from '../src/config/loadConfig.ts'
import { ensureDashboardBuilt } from './helpers/ensureDashboardBuilt.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const token = 'dashboard-admin-token-0123456789'

type Answer = { status: number; headers: Headers; text: string; json: unknown }

describe('dashboard: sessions, CSRF, assets (HTTP)', () => {
  let node: TestNode
  let gateway: TestGateway
  let offsetMs = 0
  const clock = { now: () => Date.now() + offsetMs }

  before(async () => {
    ensureDashboardBuilt()
    node = await startTestNode({ loadBlocks: 1 })
    gateway = await startTestGateway({ upstreams: [node.url], config: { admin: { token } }, clock })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  async function call(
    method: string,
    path: string,
    options: {
      body?: unknown
      cookie?: string
      origin?: string | null
      csrf?: string
      headers?: Record<string, string>
    } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers }
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    if (options.cookie) headers.cookie = options.cookie
    const origin = options.origin === undefined ? gateway.url : options.origin
    if (origin !== null && method !== 'GET') headers.origin = origin
    if (options.csrf) headers['x-csrf-token'] = options.csrf
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    })
    const text = await response.text()
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: response.status, headers: response.headers, text, json }
  }

  async function signIn(): Promise<{ cookie: string; csrf: string; setCookie: string }> {
    const answer = await call('POST', '/dashboard/api/session', { body: { token } })
    assert.equal(answer.status, 200)
    const setCookie = answer.headers.get('set-cookie') ?? ''
    return {
      cookie: setCookie.split(';')[0] ?? '',
      csrf: (answer.json as { csrfToken: string }).csrfToken,
      setCookie,
    }
  }

  it('serves the page and its hashed assets with caching headers, compressed', async () => {
    const page = await call('GET', '/dashboard')
    assert.equal(page.status, 200)
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
    assert.equal(page.headers.get('cache-control'), 'no-cache')
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/)
    assert.equal(page.headers.get('x-frame-options'), 'DENY')
    const script = /src="(\/dashboard\/assets\/main-[A-Z0-9]+\.js)"/.exec(page.text)?.[1]
    const style = /href="(\/dashboard\/assets\/main-[A-Z0-9]+\.css)"/.exec(page.text)?.[1]
    assert.ok(script && style, page.text)
    for (const [path, type] of [
      [script, /^text\/javascript/],
      [style, /^text\/css/],
    ] as const) {
      const asset = await call('GET', path, { headers: { 'accept-encoding': 'br' } })
      assert.equal(asset.status, 200)
      assert.match(asset.headers.get('content-type') ?? '', type)
      assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable')
      assert.equal(asset.headers.get('content-encoding'), 'br')
    }
    assert.equal((await call('GET', '/dashboard/assets/main-NOPE.js')).status, 404)
  })

  it('signs in with the admin token only: an HttpOnly, SameSite=Strict cookie with an expiry', async () => {
    assert.equal((await call('GET', '/dashboard/api/overview')).status, 401)
    assert.deepEqual((await call('GET', '/dashboard/api/session')).json, { signedIn: false })
    assert.equal(
      (await call('POST', '/dashboard/api/session', { body: { token: 'wrong-token' } })).status,
      401,
    )
    // a sign-in from another site (or with no Origin) is refused before the token is looked at
    const crossSite = await call('POST', '/dashboard/api/session', {
      body: { token },
      origin: 'http://evil.example',
    })
    assert.equal(crossSite.status, 400)
    assert.equal(
      (await call('POST', '/dashboard/api/session', { body: { token }, origin: null })).status,
      400,
    )

    const { cookie, setCookie } = await signIn()
    assert.match(
      setCookie,
      /^tollgate_session=[\w.-]+; Path=\/dashboard; Max-Age=43200; HttpOnly; SameSite=Strict$/,
    )
    const overview = await call('GET', '/dashboard/api/overview', { cookie })
    assert.equal(overview.status, 200)
    assert.equal(overview.headers.get('cache-control'), 'no-store')
    assert.deepEqual(
      (overview.json as { networks: { name: string }[] }).networks.map((network) => network.name),
      ['devnet'],
    )

    const behindTls = await call('POST', '/dashboard/api/session', {
      body: { token },
      headers: { 'x-forwarded-proto': 'https' },
    })
    assert.match(behindTls.headers.get('set-cookie') ?? '', /; Secure$/)

    // a cookie whose signature does not match, and one past its expiry, are no session
    const [name, value = ''] = cookie.split('=')
    const forged = `${name}=${value.slice(0, -1)}${value.endsWith('A') ? 'B' : 'A'}`
    assert.equal((await call('GET', '/dashboard/api/overview', { cookie: forged })).status, 401)
    offsetMs = 12 * 3_600_000 + 1_000
    try {
      assert.equal((await call('GET', '/dashboard/api/overview', { cookie })).status, 401)
    } finally {
      offsetMs = 0
    }
  })

  it('changes state only with the CSRF token, from this origin; signing out ends the session', async () => {
    const { cookie, csrf } = await signIn()
    const body = { plan: 'team', name: 'csrf', secret: true }
    const noToken = await call('POST', '/dashboard/api/admin/keys', { body, cookie })
    assert.equal(noToken.status, 400)
    assert.deepEqual(noToken.json, { error: { message: 'missing or wrong CSRF token: reload the page' } })
    const otherSite = await call('POST', '/dashboard/api/admin/keys', {
      body,
      cookie,
      csrf,
      origin: 'http://evil.example',
    })
    assert.deepEqual(otherSite.json, { error: { message: 'cross-origin request refused' } })
    assert.equal((await call('GET', '/dashboard/api/admin/keys', { cookie })).status, 200)
    const keysBefore = (await call('GET', '/dashboard/api/admin/keys', { cookie })).json as unknown[]

    const created = await call('POST', '/dashboard/api/admin/keys', { body, cookie, csrf })
    assert.equal(created.status, 201)
    const { key, secret } = created.json as { key: string; secret: string }
    assert.match(secret, /^[0-9a-f]{32}$/)
    assert.equal(
      ((await call('GET', '/dashboard/api/admin/keys', { cookie })).json as unknown[]).length,
      keysBefore.length + 1,
    )

    // the admin API's own checks and messages
    const refused = await call('PATCH', `/dashboard/api/admin/keys/${key}`, {
      body: { dailyCredits: 10 ** 12 },
      cookie,
      csrf,
    })
    assert.equal(refused.status, 400)
    assert.match(
      (refused.json as { error: { message: string } }).error.message,
      /--daily-credits can only lower/,
    )

    // after creation nothing the dashboard serves holds the secret
    await gateway.app.keys.refresh()
    assert.equal((await postJson(`${gateway.url}/v3/${key}`, rpcBody('eth_chainId'))).status, 200)
    const page = await call('GET', '/dashboard')
    const assets = [...page.text.matchAll(/"(\/dashboard\/assets\/[^"]+)"/g)].map(
      (match) => match[1] as string,
    )
    for (const path of [
      '/dashboard',
      ...assets,
      '/dashboard/api/overview',
      '/dashboard/api/gas',
      '/dashboard/api/admin/keys',
      `/dashboard/api/admin/keys/${key}`,
      '/dashboard/api/admin/usage?hours=48',
      '/dashboard/api/admin/usage?days=30',
      '/dashboard/api/session',
    ]) {
      const answer = await call('GET', path, { cookie })
      assert.equal(answer.status, 200, path)
      assert.ok(!answer.text.includes(secret), path)
    }

    const out = await call('DELETE', '/dashboard/api/session', { cookie, csrf })
    assert.match(out.headers.get('set-cookie') ?? '', /^tollgate_session=; Path=\/dashboard; Max-Age=0;/)
    assert.equal((await call('GET', '/dashboard/api/overview', { cookie })).status, 401)
    assert.deepEqual((await call('GET', '/dashboard/api/session', { cookie })).json, { signedIn: false })
  })

  it('is not found without an admin token', async () => {
    const plain = await startTestGateway({ upstreams: [node.url] })
    try {
      for (const path of ['/dashboard', '/dashboard/api/session', '/dashboard/assets/x.js']) {
        assert.equal((await fetch(`${plain.url}${path}`)).status, 404, path)
      }
    } finally {
      await plain.close()
    }
  })

  it('refuses an address that keeps sending wrong tokens, even with the right one', async () => {
    // 10 wrong tokens at most (this address sent some above), then 429 without a look at the token
    let refused = 0
    for (; refused <= 10; refused++) {
      const answer = await call('POST', '/dashboard/api/session', { body: { token: `wrong-${refused}` } })
      if (answer.status === 429) break
      assert.equal(answer.status, 401)
    }
    assert.ok(refused >= 1 && refused <= 10, `${refused} wrong tokens were looked at`)
    const limited = await call('POST', '/dashboard/api/session', { body: { token } })
    assert.equal(limited.status, 429)
    assert.ok(Number(limited.headers.get('retry-after')) >= 1)
    // a sign-in link is the same sign-in: refused too, and sets no cookie
    const link = await call('GET', `/dashboard?token=${token}`)
    assert.equal(link.status, 429)
    assert.equal(link.headers.get('set-cookie'), null)
    offsetMs = 60_000
    try {
      assert.equal((await call('POST', '/dashboard/api/session', { body: { token } })).status, 200)
    } finally {
      offsetMs = 0
    }
  })
})

describe('dashboard overview: a network a reload rebuilt keeps its figures', () => {
  let node: TestNode
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    gateway = await startTestGateway({
      config: {
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url, name: 'anvil' }] }],
        admin: { token },
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  type Overview = {
    networks: { name: string; cache: { hits: number; misses: number }; upstreams: { requests: number }[] }[]
  }
  async function devnetFigures() {
    const session = await fetch(`${gateway.url}/dashboard/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gateway.url },
      body: JSON.stringify({ token }),
    })
    const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
    const overview = await fetch(`${gateway.url}/dashboard/api/overview`, { headers: { cookie } })
    const [devnet] = ((await overview.json()) as Overview).networks
    assert.ok(devnet)
    return { cache: devnet.cache, calls: devnet.upstreams[0]?.requests ?? 0 }
  }
  /** The same call twice: the cache loads it, then has it. */
  async function chainIdTwice() {
    for (const id of [1, 2])
      assert.equal((await postJson(gateway.endpoint, rpcBody('eth_chainId', [], id))).status, 200)
  }

  it('counts the cache and the upstream calls of the network before and after the reload', async () => {
    await chainIdTwice()
    const before = await devnetFigures()
    assert.deepEqual(before.cache, { ...before.cache, hits: 1, misses: 1 })
    assert.ok(before.calls >= 1)

    // a setting of the network changed: it is built new, with a new cache and upstream pool
    const config = parse(readFileSync(gateway.configFile, 'utf8')) as { networks: Record<string, unknown>[] }
    config.networks = config.networks.map((network) => ({ ...network, maxLogsBlockRange: 5_000 }))
    writeFileSync(gateway.configFile, stringify(config))
    const reloaded = await gateway.app.reloader.reload(loadConfig(gateway.configFile))
    assert.deepEqual(reloaded.networks.rebuilt, ['devnet'])

    await chainIdTwice()
    const after = await devnetFigures()
    assert.deepEqual(after.cache, { ...after.cache, hits: 2, misses: 2 })
    assert.ok(after.calls >= before.calls + 1, `${after.calls} calls after, ${before.calls} before`)
  })
})
