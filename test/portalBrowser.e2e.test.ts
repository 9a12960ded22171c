import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core'
import { ensureDashboardBuilt } from './helpers/ensureDashboardBuilt.ts'
import { launchChromium } from './helpers/launchChromium.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { devnetOver, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const adminToken = 'portal-browser-admin-token-0123456789'
const phone = { width: 375, height: 800 }

/**
 * The key holders' portal at /account in a real browser: sign in with the account token, the
 * account's keys by name (made, rotated, secured, revoked), its usage; every page at phone width;
 * never a thing of another account's.
 */
describe('account portal in a real browser (Chromium)', () => {
  let node: TestNode
  let gateway: TestGateway
  let browser: Browser
  let context: BrowserContext
  let page: Page
  const pageErrors: string[] = []
  const elsewhere: string[] = []
  const tokens: Record<string, string> = {}
  const keys: Record<string, string> = {}

  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${gateway.url}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return (await response.json()) as Record<string, unknown>
  }
  const nav = (name: string) =>
    page.getByRole('navigation', { name: 'Account pages' }).getByRole('link', { name })
  const part = (title: string) =>
    page.locator('.action', { has: page.getByRole('heading', { level: 3, name: title, exact: true }) })
  const textOf = async (locator: Locator) => (await locator.textContent()) ?? ''
  /** Nothing of the other account's (its key's value or name) anywhere on the page. */
  const assertOwnOnly = async () => {
    const html = await page.content()
    assert.ok(!html.includes(keys.rival as string), 'the other account’s key is shown')
    assert.ok(!html.includes('rival-app'), 'the other account’s key name is shown')
  }

  before(async () => {
    ensureDashboardBuilt()
    node = await startTestNode({ loadBlocks: 1 })
    gateway = await startTestGateway({ config: { networks: devnetOver(node), admin: { token: adminToken } } })
    keys.web = (await admin('POST', '/keys', { account: 'acme', plan: 'developer', name: 'web' }))
      .key as string
    keys.rival = (await admin('POST', '/keys', { account: 'globex', plan: 'developer', name: 'rival-app' }))
      .key as string
    for (const account of ['acme', 'globex']) {
      tokens[account] = (await admin('POST', `/accounts/${account}/token`)).token as string
    }
    await gateway.app.keys.refresh()
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    page = await context.newPage()
    page.on('pageerror', (err) => pageErrors.push(err.message))
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        pageErrors.push(message.text())
    })
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (url.protocol.startsWith('http') && url.origin !== gateway.url) elsewhere.push(request.url())
    })
  })
  after(async () => {
    await browser?.close()
    await gateway?.close()
    await node?.stop()
  })

  it('serves the page with the dashboard’s security headers, refuses a wrong token, signs in with the account’s', async () => {
    const response = await page.goto(`${gateway.url}/account/`)
    const headers = response?.headers() ?? {}
    assert.match(headers['content-security-policy'] ?? '', /script-src 'self'/)
    assert.equal(headers['x-frame-options'], 'DENY')
    await page.getByLabel('Account token').fill(`tga_${'0'.repeat(32)}`)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('alert').filter({ hasText: 'Wrong, replaced or revoked account token.' }).waitFor()
    assert.equal(await page.getByRole('link', { name: 'Sign in with your identity provider' }).count(), 0)
    await page.getByLabel('Account token').fill(tokens.acme as string)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await nav('Overview').waitFor()
    assert.equal(await textOf(page.getByTestId('account-name')), 'acme')
    const session = (await context.cookies()).find((cookie) => cookie.name === 'tollgate_account_session')
    assert.ok(session)
    assert.equal(session.httpOnly, true)
    assert.equal(session.sameSite, 'Lax')
    assert.equal(session.path, '/account')
    // the overview: the plan and today's credits
    assert.equal(await textOf(page.getByTestId('plan')), 'developer')
    assert.equal(await textOf(page.getByTestId('credits-left')), '15,000,000')
    await assertOwnOnly()
  })

  let made = ''
  let secret = ''

  it('lists the keys by name, makes one whose secret is shown once, rotates it, edits an allowlist', async () => {
    await nav('Keys').click()
    await page.getByRole('button', { name: 'Manage key web' }).waitFor()
    const form = page.getByRole('form', { name: 'Create a key' })
    await form.getByLabel('Name', { exact: true }).fill('browser-app')
    await form.getByLabel('Make a secret (shown once)').check()
    await form.getByRole('button', { name: 'Create key' }).click()
    made = await textOf(page.getByTestId('created-key'))
    secret = await textOf(page.getByTestId('created-secret'))
    assert.match(made, /^[0-9a-f]{32}$/)
    assert.match(secret, /^[0-9a-f]{32}$/)
    await page.getByRole('button', { name: 'Done' }).click()
    await page.getByRole('button', { name: 'Manage key browser-app' }).waitFor()
    await page.reload()
    await page.getByRole('button', { name: 'Manage key browser-app' }).click()
    assert.ok(!(await page.content()).includes(secret), 'the secret is not shown again')
    assert.equal((await admin('GET', `/keys/${made}`)).account, 'acme')

    await part('Secret').getByRole('button', { name: 'Rotate the secret' }).click()
    const rotated = await textOf(part('Secret').getByTestId('created-secret'))
    assert.match(rotated, /^[0-9a-f]{32}$/)
    assert.notEqual(rotated, secret)
    await part('Secret').getByRole('button', { name: 'Done' }).click()
    await gateway.app.keys.refresh()
    const basic = (value: string) => ({
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`:${value}`).toString('base64')}`,
    })
    assert.equal(
      (await postJson(`${gateway.url}/v3/${made}`, rpcBody('eth_chainId'), basic(secret))).status,
      401,
    )
    assert.equal(
      (await postJson(`${gateway.url}/v3/${made}`, rpcBody('eth_chainId'), basic(rotated))).status,
      200,
    )

    const origins = part('Allowlists').getByRole('form', { name: 'Add to Origins' })
    await origins.getByLabel('Add origins').fill('https://app.example.com')
    await origins.getByRole('button', { name: 'Add' }).click()
    await part('Allowlists').getByText('https://app.example.com').waitFor()
    const shown = (await admin('GET', `/keys/${made}`)) as { allowlists: { origins: string[] } }
    assert.deepEqual(shown.allowlists.origins, ['https://app.example.com'])

    const security = part('Security')
    await security.getByLabel('Require the secret').check()
    await security.getByRole('button', { name: 'Save security' }).click()
    await security.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    assert.equal((await admin('GET', `/keys/${made}`)).requireSecret, true)
    // the operator's choices are not offered
    assert.equal(await page.getByText('Partner failover for every request').count(), 0)
    assert.equal(await part('Networks').count(), 0)
    await assertOwnOnly()
  })

  it('shows the calls made with the account’s keys by day, method, network and key', async () => {
    for (let id = 0; id < 3; id++) {
      assert.equal(
        (await postJson(`${gateway.url}/v3/${keys.web}`, rpcBody('eth_chainId', [], id))).status,
        200,
      )
    }
    assert.equal((await postJson(`${gateway.url}/v3/${keys.rival}`, rpcBody('eth_blockNumber'))).status, 200)
    await nav('Usage').click()
    // by name; the other key's call (its rotated secret's, above) is then left out
    await until(
      async () =>
        (await page.getByLabel('Key', { exact: true }).locator('option', { hasText: 'web' }).count()) === 1,
      'the key in the filter',
    )
    await page.getByLabel('Key', { exact: true }).selectOption('web')
    const byMethod = page.getByRole('table', { name: 'By method' })
    await until(
      async () => (await byMethod.locator('tbody tr', { hasText: 'eth_chainId' }).count()) === 1,
      'the calls in the usage page',
    )
    const cells = await byMethod
      .locator('tbody tr', { hasText: 'eth_chainId' })
      .locator('td')
      .evaluateAll((tds) => tds.map((td) => td.textContent ?? ''))
    assert.deepEqual(cells.slice(0, 2), ['eth_chainId', '3'])
    // the other account's call is not the account's
    assert.equal(await byMethod.locator('tbody tr', { hasText: 'eth_blockNumber' }).count(), 0)
    await page.getByRole('table', { name: 'By key' }).locator('tbody tr', { hasText: 'web' }).waitFor()
    await page.locator('figure canvas').first().waitFor()
    await assertOwnOnly()
  })

  it('turns usage alerts on: the signing secret shown once, the delivery log empty', async () => {
    await nav('Alerts').click()
    await page.getByRole('heading', { level: 1, name: 'Alerts' }).waitFor()
    assert.equal(await textOf(page.getByTestId('alerts-state')), 'Alerts are off.')
    await page.getByLabel('Webhook URL').fill('https://hooks.example/acme')
    await page.getByRole('button', { name: 'Turn alerts on' }).click()
    const secret = await textOf(page.getByTestId('created-secret'))
    assert.match(secret, /^tgw_[0-9a-f]{64}$/)
    assert.equal(await textOf(page.getByTestId('alerts-state')), 'Alerts are on.')
    await page.getByRole('table', { name: 'Deliveries' }).waitFor()
    // the operator sees what the key holder set, never the secret
    const shown = await admin('GET', '/accounts/acme/alerts')
    assert.equal(shown.webhook, 'https://hooks.example/acme')
    assert.ok(!JSON.stringify(shown).includes(secret))
    await page.getByRole('button', { name: 'Done' }).click()
    assert.equal(await page.getByTestId('created-secret').count(), 0)
    await assertOwnOnly()
  })

  it('every portal page, and every dashboard page, fits a phone’s width', async () => {
    const phonePage = await context.newPage()
    await phonePage.setViewportSize(phone)
    const overflow = async (name: string) => {
      const wider = Number(
        await phonePage.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
      )
      assert.ok(wider <= 0, `${name} at 375 px overflows by ${wider} px`)
    }
    await phonePage.goto(`${gateway.url}/account/#/overview`)
    for (const name of ['Overview', 'Keys', 'Usage', 'Alerts', 'Requests']) {
      await phonePage.getByRole('navigation', { name: 'Account pages' }).getByRole('link', { name }).click()
      await phonePage.getByRole('heading', { level: 1 }).first().waitFor()
      if (name === 'Keys') {
        await phonePage.getByRole('button', { name: 'Manage key browser-app' }).click()
        await phonePage.getByRole('heading', { level: 2, name: /^Key / }).waitFor()
      }
      if (name === 'Usage') await phonePage.getByRole('table', { name: 'By method' }).waitFor()
      if (name === 'Requests')
        await phonePage.getByRole('table', { name: 'Errors and refused calls by reason' }).waitFor()
      await overflow(`portal ${name}`)
    }
    // the dashboard, signed in by its link
    await phonePage.goto(`${gateway.url}/dashboard?token=${adminToken}`)
    for (const name of ['Overview', 'Usage', 'Keys', 'Gas']) {
      await phonePage.getByRole('navigation', { name: 'Dashboard pages' }).getByRole('link', { name }).click()
      await phonePage.getByRole('heading', { level: 1, name }).waitFor()
      if (name === 'Keys') await phonePage.getByRole('table', { name: 'API keys' }).waitFor()
      await overflow(`dashboard ${name}`)
    }
    await phonePage.close()
  })

  it('revokes a key after a confirmation; signing out ends the session', async () => {
    await nav('Keys').click()
    await page.getByRole('button', { name: 'Manage key browser-app' }).click()
    await page.getByRole('button', { name: 'Revoke…' }).click()
    await page.getByRole('button', { name: 'Revoke browser-app' }).click()
    await page.getByRole('button', { name: 'Manage key browser-app' }).waitFor({ state: 'detached' })
    assert.equal((await admin('GET', `/keys/${made}`)).error !== undefined, true)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByLabel('Account token').waitFor()
    await page.reload()
    await page.getByLabel('Account token').waitFor()
    assert.deepEqual(pageErrors, [])
    assert.deepEqual(elsewhere, [])
  })
})
