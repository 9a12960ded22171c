import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { mkdirSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core'
import { ensureDashboardBuilt } from './helpers/ensureDashboardBuilt.ts'
import { launchChromium } from './helpers/launchChromium.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { devnetOver, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const token = 'dashboard-browser-token-0123456789'
const run = promisify(execFile)
/**
 * Screenshots of every page, desktop and phone width: `npm run screenshots` names docs/screenshots
 * (committed, shown in docs/admin.md); a test run writes them to the gitignored .tmp/.
 */
const screenshotDir = resolve(process.env.TOLLGATE_SCREENSHOTS_DIR ?? '.tmp/dashboard-screenshots')
const desktop = { width: 1280, height: 900 }
const phone = { width: 375, height: 812 }

type UsageRow = {
  key: string
  network: string
  method: string
  calls: number
  credits: number
  failoverCalls: number
}

describe('dashboard in a real browser (Chromium)', () => {
  let node: TestNode
  let gateway: TestGateway
  let browser: Browser
  let context: BrowserContext
  let page: Page
  const pageErrors: string[] = []
  const failedRequests: string[] = []
  /** Requests to anywhere but tollgate: the pages must need none. */
  const elsewhere: string[] = []

  before(async () => {
    ensureDashboardBuilt()
    mkdirSync(screenshotDir, { recursive: true })
    node = await startTestNode({ loadBlocks: 20 })
    gateway = await startTestGateway({
      config: { networks: devnetOver(node), admin: { token }, gas: { enabled: true } },
    })
    const indexer = gateway.app.indexers.get(31337)
    const head = Number(
      ((await postJson(node.url, rpcBody('eth_blockNumber'))).json as { result: string }).result,
    )
    await until(async () => {
      await indexer?.tick()
      return (indexer?.window()?.head ?? -1) >= head
    }, 'the gas indexer')
    browser = await launchChromium()
    context = await browser.newContext({ viewport: desktop })
    page = await context.newPage()
    // a script error or a refused script, style or request (CSP) shows here
    page.on('pageerror', (err) => pageErrors.push(err.message))
    page.on('console', (message) => {
      // failed requests are checked below, by their URL
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        pageErrors.push(message.text())
    })
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (url.protocol.startsWith('http') && url.origin !== gateway.url) elsewhere.push(request.url())
    })
    page.on('response', (response) => {
      if (response.status() >= 400)
        failedRequests.push(
          `${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`,
        )
    })
  })
  after(async () => {
    await browser?.close()
    await gateway?.close()
    await node?.stop()
  })

  const admin = async (path: string) => {
    const response = await fetch(`${gateway.url}/admin${path}`, {
      headers: { authorization: `Bearer ${token}` },
    })
    return (await response.json()) as unknown
  }
  const nav = (name: string) =>
    page.getByRole('navigation', { name: 'Dashboard pages' }).getByRole('link', { name })
  /** The rows of the table with this caption, each as its cells' texts. */
  const tableRows = (caption: string): Promise<string[][]> =>
    page
      .locator('table', { has: page.locator('caption', { hasText: caption }) })
      .locator('tbody tr')
      .evaluateAll((rows) =>
        rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent ?? '')),
      )
  const textOf = async (locator: Locator) => (await locator.textContent()) ?? ''
  /**
   * What keeps a column of the page's tables from a reader at this width: a cell beyond the screen's
   * edge (to be reached only by scrolling sideways, or not at all), or a stacked row's cell that does
   * not show its column's name.
   */
  const tableProblems = () =>
    page.locator('main table').evaluateAll((tables) =>
      tables.flatMap((table) => {
        const view = table.ownerDocument.defaultView
        if (!view) return ['no window']
        const width = table.ownerDocument.documentElement.clientWidth
        const caption = table.querySelector('caption')?.textContent ?? table.className
        const headers = [...table.querySelectorAll('thead th')].map((th) =>
          (th.textContent ?? '').replace(/[\s▲▼]+$/, ''),
        )
        const problems: string[] = []
        for (const row of table.querySelectorAll('tbody tr')) {
          ;[...row.children].forEach((cell, index) => {
            const { left, right } = cell.getBoundingClientRect()
            if (left < 0 || right > width)
              problems.push(`${caption}: "${cell.textContent}" at ${left}..${right} px of ${width}`)
            if (!table.classList.contains('stack') || cell.tagName !== 'TD' || cell.hasAttribute('colspan'))
              return
            const shown = view.getComputedStyle(cell, '::before').content
            if (shown !== `"${headers[index]}" / ""`)
              problems.push(
                `${caption}: "${cell.textContent}" shown after ${shown}, its column ${headers[index]}`,
              )
          })
        }
        return problems
      }),
    )

  it('refuses a wrong token, then signs in with the admin token', async () => {
    await page.goto(`${gateway.url}/dashboard`)
    await page.getByLabel('Admin token').fill('not-the-admin-token')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('alert').filter({ hasText: 'Wrong admin token.' }).waitFor()
    await page.getByLabel('Admin token').fill(token)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await nav('Overview').waitFor()
    const cookies = await context.cookies()
    const session = cookies.find((cookie) => cookie.name === 'tollgate_session')
    assert.ok(session, JSON.stringify(cookies))
    assert.equal(session.httpOnly, true)
    assert.equal(session.sameSite, 'Strict')
    assert.ok(session.expires > Date.now() / 1000, 'the session cookie has an expiry')
    // keyboard: the first Tab reaches the skip link, the next one the first page link
    await page.keyboard.press('Tab')
    assert.equal(await page.evaluate('document.activeElement.textContent'), 'Skip to the page')
    await page.keyboard.press('Tab')
    assert.equal(await page.evaluate('document.activeElement.textContent'), 'Overview')
  })

  let key = ''
  let secret = ''

  it('creates a key: its secret is shown once', async () => {
    await nav('Keys').click()
    const form = page.getByRole('form', { name: 'Create a key' })
    await form.getByLabel('Plan').selectOption('team')
    await form.getByLabel('Name', { exact: true }).fill('browser-app')
    await form.getByLabel('Make a secret (shown once)').check()
    await form.getByRole('button', { name: 'Create key' }).click()
    key = await textOf(page.getByTestId('created-key'))
    secret = await textOf(page.getByTestId('created-secret'))
    assert.match(key, /^[0-9a-f]{32}$/)
    assert.match(secret, /^[0-9a-f]{32}$/)
    await page.getByRole('button', { name: 'Done' }).click()
    await page.getByRole('cell', { name: key }).waitFor()
    await page.reload()
    await page.getByRole('cell', { name: key }).waitFor()
    assert.ok(!(await page.content()).includes(secret), 'the secret is not shown again')
  })

  it('shows the calls made with the key in the usage chart and table, equal to the admin API and the CLI', async () => {
    await gateway.app.keys.refresh()
    const endpoint = `${gateway.url}/v3/${key}`
    for (let id = 0; id < 3; id++)
      assert.equal((await postJson(endpoint, rpcBody('eth_blockNumber', [], id))).status, 200)
    for (let id = 0; id < 2; id++)
      assert.equal((await postJson(endpoint, rpcBody('eth_chainId', [], id))).status, 200)
    assert.equal(
      (await postJson(endpoint, rpcBody('eth_getBalance', [node.fixtures.accounts[0], 'latest']))).status,
      200,
    )

    await nav('Usage').click()
    await until(
      async () =>
        (await page.getByLabel('Key', { exact: true }).locator('option', { hasText: key }).count()) === 1,
      'the key in the filter',
    )
    await page.getByLabel('Key', { exact: true }).selectOption(key)
    const hourly = (await admin(`/usage?key=${key}&hours=48`)) as (UsageRow & { hour: string })[]
    const calls = hourly.reduce((sum, row) => sum + row.calls, 0)
    const credits = hourly.reduce((sum, row) => sum + row.credits, 0)
    assert.equal(calls, 6)
    await page
      .getByTestId('usage-sum')
      .filter({ hasText: `${calls} calls, ${credits} credits` })
      .waitFor()
    const chart = page.getByRole('img', {
      name: new RegExp(`hourly.*for key ${key}.*: ${calls} calls, ${credits} credits`),
    })
    await chart.locator('canvas').waitFor()
    const blockNumberCredits = hourly
      .filter((row) => row.method === 'eth_blockNumber')
      .reduce((sum, row) => sum + row.credits, 0)
    await page
      .getByRole('img', {
        name: new RegExp(
          `Credits hourly, last 48 hours by method: .*eth_blockNumber ${blockNumberCredits}\\b`,
        ),
      })
      .locator('canvas')
      .waitFor()
    const toCells = (row: UsageRow, period: string) =>
      [period, row.key, row.network, row.method, row.calls, row.credits, row.failoverCalls].map(String)
    const sorted = (rows: string[][]) => rows.map((row) => row.join('|')).sort()
    assert.deepEqual(
      sorted(await tableRows('Usage hourly, last 48 hours')),
      sorted(hourly.map((row) => toCells(row, row.hour))),
    )

    await page.getByLabel('Period').selectOption('daily')
    await page.locator('caption', { hasText: 'Usage daily, last 30 days' }).waitFor()
    const { stdout } = await run(process.execPath, [
      resolve('bin/tollgate.js'),
      'usage',
      '--key',
      key,
      '--days',
      '30',
      '--json',
      '--config',
      gateway.configFile,
    ])
    const fromCli = JSON.parse(stdout) as (UsageRow & { day: string })[]
    assert.deepEqual(fromCli, await admin(`/usage?key=${key}&days=30`))
    await until(
      async () =>
        JSON.stringify(sorted(await tableRows('Usage daily, last 30 days'))) ===
        JSON.stringify(sorted(fromCli.map((row) => toCells(row, row.day)))),
      'the daily table to equal `tollgate usage`',
    )

    // the CSV export holds the same rows
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ])
    const csv = readFileSync((await download.path()) ?? assert.fail('no download'), 'utf8')
      .trim()
      .split('\n')
    assert.equal(csv[0], 'period,key,network,method,calls,credits,failoverCalls')
    assert.deepEqual(csv.slice(1).sort(), fromCli.map((row) => toCells(row, row.day).join(',')).sort())

    // the table sorts from the keyboard: its header buttons
    await page.getByRole('button', { name: 'calls', exact: true }).focus()
    await page.keyboard.press('Enter')
    await page.locator('th[aria-sort="descending"]', { hasText: 'calls' }).waitFor()
  })

  it("adds an origin to the key's allowlist with the CLI's checks and message", async () => {
    await nav('Keys').click()
    await page.getByRole('button', { name: 'Manage key browser-app' }).click()
    const addOrigin = page.getByRole('form', { name: 'Add to Origins' })
    await addOrigin.getByLabel('Add origins').fill('https://app.example/path')
    await addOrigin.getByRole('button', { name: 'Add' }).click()
    const refusal = await textOf(page.getByRole('alert').first())
    const cli = await run(process.execPath, [
      resolve('bin/tollgate.js'),
      'keys',
      'allowlist',
      'add',
      key,
      'origins',
      'https://app.example/path',
      '--config',
      gateway.configFile,
    ]).then(
      () => assert.fail('the CLI took the entry'),
      (err: { stderr: string }) => err.stderr.trim(),
    )
    assert.equal(refusal, cli)

    await addOrigin.getByLabel('Add origins').fill('https://app.example')
    await addOrigin.getByRole('button', { name: 'Add' }).click()
    await page.getByRole('list', { name: 'Origins' }).getByText('https://app.example').waitFor()
    assert.deepEqual(
      ((await admin(`/keys/${key}`)) as { allowlists: { origins: string[] } }).allowlists.origins,
      ['https://app.example'],
    )
    await gateway.app.keys.refresh()
    const endpoint = `${gateway.url}/v3/${key}`
    const call = (origin: string) =>
      postJson(endpoint, rpcBody('eth_chainId'), { 'content-type': 'application/json', origin })
    assert.equal((await call('https://app.example')).status, 200)
    assert.equal((await call('https://other.example')).status, 403)
  })

  it("sets limits, security, networks and JWT keys, and rotates the secret, with the CLI's checks", async () => {
    const part = (title: string) =>
      page.locator('.action', { has: page.getByRole('heading', { level: 3, name: title, exact: true }) })
    const show = async () =>
      (await admin(`/keys/${key}`)) as Record<string, unknown> & { jwt: { required: boolean } }
    const cli = (...args: string[]) =>
      run(process.execPath, [
        resolve('bin/tollgate.js'),
        'keys',
        ...args,
        '--config',
        gateway.configFile,
      ]).then(
        () => assert.fail(`the CLI took ${args.join(' ')}`),
        (err: { stderr: string }) => err.stderr.trim(),
      )

    const limits = part('Limits')
    await limits.getByLabel("Daily credits (0: the plan's)").fill('1000000000000')
    await limits.getByRole('button', { name: 'Save limits' }).click()
    assert.equal(
      await textOf(limits.getByRole('alert')),
      await cli('set-limits', key, '--daily-credits', '1000000000000'),
    )
    await limits.getByLabel("Daily credits (0: the plan's)").fill('1000')
    await limits.getByRole('button', { name: 'Save limits' }).click()
    await limits.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    assert.equal((await show()).dailyCredits, 1000)

    const security = part('Security')
    await security.getByLabel('Require a JWT').check()
    await security.getByRole('button', { name: 'Save security' }).click()
    assert.equal(await textOf(security.getByRole('alert')), await cli('security', key, '--require-jwt'))

    const jwt = part('JWT public keys')
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    await jwt.getByLabel('Key id (kid)').fill('k1')
    await jwt
      .getByLabel('PEM public key (RS256 or ES256)')
      .fill(publicKey.export({ type: 'spki', format: 'pem' }) as string)
    await jwt.getByRole('button', { name: 'Add JWT key' }).click()
    await jwt.getByRole('listitem').filter({ hasText: 'k1 (ES256)' }).waitFor()
    await security.getByRole('button', { name: 'Save security' }).click()
    await security.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    assert.equal((await show()).jwt.required, true)
    // the last JWT key of a key that requires JWTs stays
    await jwt.getByRole('button', { name: 'Remove JWT key k1' }).click()
    assert.equal(await textOf(jwt.getByRole('alert')), await cli('jwt', 'remove', key, '--kid', 'k1'))
    await security.getByLabel('Require a JWT').uncheck()
    await security.getByRole('button', { name: 'Save security' }).click()
    await security.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    await jwt.getByRole('button', { name: 'Remove JWT key k1' }).click()
    await jwt.getByRole('listitem').filter({ hasText: 'none' }).waitFor()

    const networks = part('Networks')
    await networks.getByLabel('devnet').check()
    await networks.getByRole('button', { name: 'Save networks' }).click()
    await networks.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    assert.deepEqual((await show()).networks, ['devnet'])

    await part('Secret').getByRole('button', { name: 'Rotate the secret' }).click()
    const rotated = await textOf(part('Secret').getByTestId('created-secret'))
    assert.match(rotated, /^[0-9a-f]{32}$/)
    assert.notEqual(rotated, secret)
    await gateway.app.keys.refresh()
    const withSecret = (value: string) =>
      postJson(`${gateway.url}/v3/${key}`, rpcBody('eth_chainId'), {
        'content-type': 'application/json',
        origin: 'https://app.example',
        authorization: `Basic ${Buffer.from(`:${value}`).toString('base64')}`,
      })
    assert.equal((await withSecret(rotated)).status, 200)
    assert.equal((await withSecret(secret)).status, 401)
    await part('Secret').getByRole('button', { name: 'Done' }).click()
  })

  it('writes screenshots of every page at desktop and phone width', async () => {
    for (const [width, viewport] of [
      ['desktop', desktop],
      ['phone', phone],
    ] as const) {
      await page.setViewportSize(viewport)
      for (const name of ['Overview', 'Usage', 'Keys', 'Gas', 'Requests']) {
        await nav(name).click()
        await page.getByRole('heading', { level: 1, name }).waitFor()
        if (name === 'Overview') {
          await page.getByRole('table', { name: 'devnet upstreams' }).waitFor()
          // this test's HTTP answers on devnet: the six calls, the allowed origin's and the new secret's;
          // the refused origin's; the old secret's
          assert.deepEqual(await tableRows('devnet: answers by HTTP status'), [
            ['200', '8', '80%'],
            ['401', '1', '10%'],
            ['403', '1', '10%'],
          ])
        }
        if (name === 'Usage' || name === 'Overview') await page.locator('figure canvas').first().waitFor()
        if (name === 'Gas')
          await page
            .getByRole('img', { name: /base fee in Gwei/ })
            .locator('canvas')
            .waitFor()
        // the refusals above (the refused origin’s, the old secret’s) are logged whatever the sample
        if (name === 'Requests')
          await page
            .getByRole('table', { name: 'Requests, newest first' })
            .locator('td[data-label="status"]', { hasText: '403' })
            .first()
            .waitFor()
        if (name === 'Keys') {
          await page.getByRole('table', { name: 'API keys' }).waitFor()
          await page.getByRole('button', { name: 'Manage key browser-app' }).click()
          await page.getByRole('heading', { level: 2, name: /^Key / }).waitFor()
        }
        // nothing wider than the screen; on a phone every column of every table on it, named
        const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')
        assert.ok(Number(overflow) <= 0, `${name} at ${width} width overflows by ${overflow} px`)
        if (width === 'phone') assert.deepEqual(await tableProblems(), [], name)
        await page.screenshot({ path: `${screenshotDir}/${name.toLowerCase()}-${width}.png`, fullPage: true })
      }
    }
    await page.setViewportSize(desktop)
  })

  it('revokes the key: calls with it are refused with 401', async () => {
    await nav('Keys').click()
    await page.getByRole('button', { name: 'Manage key browser-app' }).click()
    await page.getByRole('button', { name: 'Revoke…' }).click()
    await page.getByRole('button', { name: 'Revoke browser-app' }).click()
    await page.getByRole('cell', { name: key }).waitFor({ state: 'detached' })
    await gateway.app.keys.refresh()
    const refused = await postJson(`${gateway.url}/v3/${key}`, rpcBody('eth_chainId'))
    assert.equal(refused.status, 401)
  })

  it('ran without a script error or a content-security-policy refusal; refused only what it should', () => {
    assert.deepEqual(pageErrors, [])
    assert.deepEqual(elsewhere, [])
    // the wrong token, then the refusals the test asked for: an origin that is not one, daily credits
    // above the plan's, JWTs required without a JWT key, the last JWT key of a key that requires them
    assert.deepEqual(failedRequests, [
      '401 POST /dashboard/api/session',
      `400 POST /dashboard/api/admin/keys/${key}/allowlists/origins`,
      `400 PATCH /dashboard/api/admin/keys/${key}`,
      `400 PATCH /dashboard/api/admin/keys/${key}`,
      `400 DELETE /dashboard/api/admin/keys/${key}/jwt-keys/k1`,
    ])
  })
})
