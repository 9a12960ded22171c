import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { ensureDashboardBuilt } from './helpers/ensureDashboardBuilt.ts'
import { exited, type GatewayProcess, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { launchChromium } from './helpers/launchChromium.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

// `tollgate start` as a user runs it, with no config (the embedded default: the devnet, SQLite in the
// working folder): its banner's sign-in link followed by a real HTTP client keeping the cookie, and
// by Chromium; then a start with a config file, which keeps the dashboard off without an admin token.

type Started = { gateway: GatewayProcess; banner: string; link: string; token: string }

async function startEmbedded(cwd: string, args: string[] = []): Promise<Started> {
  const gateway = await startGatewayProcess(['start', '--port', '0', ...args], { cwd, ready: /Ctrl-C stops/ })
  const banner = gateway.output()
  const link = /^ {2}(http:\/\/127\.0\.0\.1:\d+\/dashboard\?token=\S+)$/m.exec(banner)?.[1]
  assert.ok(link, `a sign-in link in:\n${banner}`)
  return { gateway, banner, link, token: new URL(link).searchParams.get('token') ?? '' }
}

/** Follows the link as a browser does its first hop: the cookie it sets, and where it sends on to. */
async function followLink(
  link: string,
): Promise<{ status: number; location: string | null; cookie: string }> {
  const answer = await fetch(link, { redirect: 'manual' })
  const setCookie = answer.headers.get('set-cookie') ?? ''
  return {
    status: answer.status,
    location: answer.headers.get('location'),
    cookie: setCookie.split(';')[0] ?? '',
  }
}

const withCookie = (url: string, cookie: string) => fetch(url, { headers: { cookie } })

describe('npm start (the embedded default) serves the dashboard, signed in by the link its banner prints', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-demo-dashboard-'))
  let first: Started

  before(async () => {
    ensureDashboardBuilt()
    first = await startEmbedded(cwd)
  })
  after(() => {
    first?.gateway.child.kill('SIGKILL')
    rmSync(cwd, { recursive: true, force: true })
  })

  it('prints the banner as one block, first: no log line above it or inside it', () => {
    assert.ok(first.banner.startsWith('tollgate is listening on '), first.banner)
    const end = first.banner.indexOf('Ctrl-C stops the gateway and the devnet.')
    assert.ok(end > 0, first.banner)
    assert.doesNotMatch(first.banner.slice(0, end), /^\{"level"/m)
    assert.match(first.banner, /^Dashboard \(the link signs your browser in; a new link at each start\):$/m)
  })

  it('the link sets the session cookie and sends the browser on to /dashboard: the page and its API answer', async () => {
    const { url } = first.gateway
    const followed = await followLink(first.link)
    assert.equal(followed.status, 303)
    assert.equal(followed.location, '/dashboard', 'on to the page, the token left behind')
    assert.match(followed.cookie, /^tollgate_session=[\w.-]+$/)

    const page = await withCookie(`${url}/dashboard`, followed.cookie)
    assert.equal(page.status, 200)
    assert.match(await page.text(), /<script[^>]+src="\/dashboard\/assets\/main-\w+\.js"/)
    const session = (await (await withCookie(`${url}/dashboard/api/session`, followed.cookie)).json()) as {
      signedIn: boolean
    }
    assert.equal(session.signedIn, true)
    const overview = await withCookie(`${url}/dashboard/api/overview`, followed.cookie)
    assert.equal(overview.status, 200)
    const { networks } = (await overview.json()) as { networks: { name: string }[] }
    assert.deepEqual(
      networks.map((network) => network.name),
      ['devnet'],
    )
    // the keys page lists the demo key the banner printed
    const demoKey = /Demo API key: ([0-9a-f]{32})/.exec(first.banner)?.[1]
    const keys = (await (await withCookie(`${url}/dashboard/api/admin/keys`, followed.cookie)).json()) as {
      key: string
    }[]
    assert.ok(
      keys.some((key) => key.key === demoKey),
      JSON.stringify(keys),
    )
    // without the cookie: not signed in
    assert.equal((await fetch(`${url}/dashboard/api/overview`)).status, 401)
    // the same token is this run's admin token
    const admin = await fetch(`${url}/admin/keys`, { headers: { authorization: `Bearer ${first.token}` } })
    assert.equal(admin.status, 200)
  })

  it('a link with another token signs nothing in and says why', async () => {
    const wrong = new URL(first.link)
    wrong.searchParams.set('token', `${first.token.slice(0, -1)}${first.token.endsWith('A') ? 'B' : 'A'}`)
    const answer = await fetch(wrong, { redirect: 'manual' })
    assert.equal(answer.status, 401)
    assert.equal(answer.headers.get('set-cookie'), null)
    assert.match(
      ((await answer.json()) as { error: { message: string } }).error.message,
      /^this sign-in link's token is not the admin token/,
    )
  })

  it('in Chromium: the link opens the signed-in dashboard at /dashboard', async () => {
    const browser = await launchChromium()
    try {
      const page = await browser.newPage()
      await page.goto(first.link)
      await page
        .getByRole('navigation', { name: 'Dashboard pages' })
        .getByRole('link', { name: 'Overview' })
        .waitFor()
      assert.equal(new URL(page.url()).pathname, '/dashboard')
      assert.equal(new URL(page.url()).search, '', 'the token is not left in the address bar')
      const cookies = await page.context().cookies()
      assert.ok(cookies.some((cookie) => cookie.name === 'tollgate_session' && cookie.httpOnly))
    } finally {
      await browser.close()
    }
  })

  it('the token is printed in the banner only; a new start makes a new one, and ends the sessions of the old', async () => {
    const { cookie } = await followLink(first.link)
    first.gateway.child.kill('SIGINT')
    assert.equal(await exited(first.gateway.child), 0)
    // the whole run's output (logs at info, the stop included) holds the token once: the banner's link
    assert.equal(first.gateway.output().split(first.token).length, 2, first.gateway.output())

    const second = await startEmbedded(cwd)
    after(() => {
      second.gateway.child.kill('SIGKILL')
    })
    assert.notEqual(second.token, first.token)
    const stale = new URL(first.link)
    stale.port = new URL(second.link).port
    assert.equal((await fetch(stale, { redirect: 'manual' })).status, 401, 'the old link')
    assert.equal(
      (await withCookie(`${second.gateway.url}/dashboard/api/overview`, cookie)).status,
      401,
      "the old start's session",
    )
    const followed = await followLink(second.link)
    assert.equal(followed.status, 303)
    assert.equal(
      (await withCookie(`${second.gateway.url}/dashboard/api/overview`, followed.cookie)).status,
      200,
    )
    // the fee history the first start stored is another chain's (its devnet is gone): said as such
    await until(
      () => /the stored fee history is not the chain's/.test(second.gateway.output()),
      'the fee history replaced',
    )
    assert.doesNotMatch(second.gateway.output(), /"msg":"reorg/)
    second.gateway.child.kill('SIGINT')
    assert.equal(await exited(second.gateway.child), 0)
  })
})

describe('npm start --workers 2: every worker takes the link and its session', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-demo-dashboard-workers-'))
  let started: Started

  before(async () => {
    ensureDashboardBuilt()
    started = await startEmbedded(cwd, ['--workers', '2'])
  })
  after(() => {
    started?.gateway.child.kill('SIGKILL')
    rmSync(cwd, { recursive: true, force: true })
  })

  it('signed in by one worker, answered by both', async () => {
    const { cookie } = await followLink(started.link)
    const instances = new Set<string>()
    // a connection each: the primary hands them to the workers in turn
    for (let attempt = 0; attempt < 20 && instances.size < 2; attempt++) {
      const answer = await fetch(`${started.gateway.url}/dashboard/api/overview`, {
        headers: { cookie, connection: 'close' },
      })
      assert.equal(answer.status, 200)
      instances.add(((await answer.json()) as { instance: string }).instance)
    }
    assert.equal(instances.size, 2, `both workers answered: ${[...instances].join(', ')}`)
    started.gateway.child.kill('SIGINT')
    assert.equal(await exited(started.gateway.child), 0)
  })
})

describe('a start with a config file and no admin token keeps the dashboard off', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-no-dashboard-'))
  let node: TestNode
  let gateway: GatewayProcess

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    const configFile = join(dir, 'tollgate.yaml')
    writeFileSync(
      configFile,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        storage: { sqlite: join(dir, 'tollgate.db') },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
        gas: { enabled: false },
      }),
    )
    gateway = await startGatewayProcess(['start', '--config', configFile], { ready: /dashboard: off/ })
  })
  after(async () => {
    gateway?.child.kill('SIGKILL')
    await node?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('answers 404 at /dashboard (a sign-in link too) and /admin; the banner says how to turn it on', async () => {
    for (const path of [
      '/dashboard',
      '/dashboard?token=0123456789abcdef0123',
      '/dashboard/api/session',
      '/admin/keys',
    ]) {
      assert.equal((await fetch(`${gateway.url}${path}`, { redirect: 'manual' })).status, 404, path)
    }
    assert.match(
      gateway.output(),
      /^ {2}dashboard: off \(admin\.token or TOLLGATE_ADMIN_TOKEN turns it and \/admin on\)$/m,
    )
    assert.doesNotMatch(gateway.output(), /dashboard\?token=/)
  })
})
