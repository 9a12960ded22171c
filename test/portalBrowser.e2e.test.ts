import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { ensureDashboardBuilt } from './helpers/ensureDashboardBuilt.ts'
import { launchChromium } from './helpers/launchChromium.ts'
import { portalNav, portalPart, rowCells, shownRequests, textOf, watchPage } from './helpers/portalPage.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type AlertReceiver, startAlertReceiver } from './helpers/startAlertReceiver.ts'
import { type GatewayStore, gatewayStores, type SharedGateways } from './helpers/startSharedGateways.ts'
import type { TestGateway } from './helpers/startTestGateway.ts'
import { devnetOver, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const adminToken = 'portal-browser-admin-token-0123456789'
const phone = { width: 375, height: 800 }

for (const store of gatewayStores) describePortal(store)

/**
 * The key holders' portal at /account in a real browser: sign in with the account token, the
 * account's keys by name (made, rotated, secured, revoked), its usage, its request log, its alerts
 * and their deliveries; every page at phone width; never a thing of another account's. On SQLite one
 * gateway; on Postgres two on one schema, where page `a` is loaded from the first and page `b` from
 * the second: the session, the keys and every figure are the same through either.
 */
function describePortal(store: GatewayStore) {
  describe(`account portal in a real browser (Chromium): ${store.name}`, () => {
    let node: TestNode
    let receiver: AlertReceiver
    let gateways: SharedGateways
    let browser: Browser
    let context: BrowserContext
    /**
     * The portal as loaded from the first gateway, and from the last: two tabs. The one acted on is
     * brought to the front first: Chromium draws no frames in a tab behind another, and Playwright
     * waits for frames before each action (about 2 s each in a tab behind).
     */
    let a: Page
    let b: Page
    const pageErrors: string[] = []
    const elsewhere: string[] = []
    const tokens: Record<string, string> = {}
    const keys: Record<string, string> = {}

    const admin = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${gateways.a.url}/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      return (await response.json()) as Record<string, unknown>
    }
    /** `times` calls of eth_chainId (5 credits each) with a key, through a gateway. */
    const call = async (gateway: TestGateway, key: string, times: number) => {
      for (let id = 0; id < times; id++) {
        const answer = await postJson(`${gateway.url}/v3/${key}`, rpcBody('eth_chainId', [], id))
        assert.equal(answer.status, 200, answer.text)
      }
    }
    /** Nothing of the other account's (its key's value or name) anywhere on the page. */
    const assertOwnOnly = async (page: Page) => {
      const html = await page.content()
      assert.ok(!html.includes(keys.rival as string), 'the other account’s key is shown')
      assert.ok(!html.includes('rival-app'), 'the other account’s key name is shown')
    }
    const watch = (page: Page) =>
      watchPage(page, (origin) => gateways.all.some((gateway) => gateway.url === origin), {
        pageErrors,
        elsewhere,
      })

    before(async () => {
      ensureDashboardBuilt()
      node = await startTestNode({ loadBlocks: 1 })
      receiver = await startAlertReceiver()
      gateways = await store.start({
        networks: devnetOver(node),
        admin: { token: adminToken },
        // every call in the log, and alerts to the receiver on 127.0.0.1, tried again at once
        requestLog: { sampleRate: 1 },
        alerts: { retryBaseMs: 50, retryMaxMs: 200, pollMs: 50, privateAddresses: true },
      })
      keys.web = (await admin('POST', '/keys', { account: 'acme', plan: 'developer', name: 'web' }))
        .key as string
      // a key with a daily limit of its own, 4 calls a day: its alerts come after a few calls
      keys.metered = (await admin('POST', '/keys', { account: 'acme', name: 'metered', dailyCredits: 20 }))
        .key as string
      keys.rival = (await admin('POST', '/keys', { account: 'globex', plan: 'developer', name: 'rival-app' }))
        .key as string
      for (const account of ['acme', 'globex']) {
        tokens[account] = (await admin('POST', `/accounts/${account}/token`)).token as string
      }
      await gateways.refreshKeys()
      browser = await launchChromium()
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
      a = watch(await context.newPage())
      b = watch(await context.newPage())
    })
    after(async () => {
      await browser?.close()
      await gateways?.close()
      await receiver?.close()
      await node?.stop()
    })

    it('serves the page with the dashboard’s security headers, refuses a wrong token, signs in with the account’s', async () => {
      const response = await a.goto(`${gateways.a.url}/account/`)
      const headers = response?.headers() ?? {}
      assert.match(headers['content-security-policy'] ?? '', /script-src 'self'/)
      assert.equal(headers['x-frame-options'], 'DENY')
      await a.getByLabel('Account token').fill(`tga_${'0'.repeat(32)}`)
      await a.getByRole('button', { name: 'Sign in' }).click()
      await a.getByRole('alert').filter({ hasText: 'Wrong, replaced or revoked account token.' }).waitFor()
      assert.equal(await a.getByRole('link', { name: 'Sign in with your identity provider' }).count(), 0)
      await a.getByLabel('Account token').fill(tokens.acme as string)
      await a.getByRole('button', { name: 'Sign in' }).click()
      await portalNav(a, 'Overview').waitFor()
      assert.equal(await textOf(a.getByTestId('account-name')), 'acme')
      const session = (await context.cookies()).find((cookie) => cookie.name === 'tollgate_account_session')
      assert.ok(session)
      assert.equal(session.httpOnly, true)
      assert.equal(session.sameSite, 'Lax')
      assert.equal(session.path, '/account')
      // the overview: the plan and today's credits
      assert.equal(await textOf(a.getByTestId('plan')), 'developer')
      assert.equal(await textOf(a.getByTestId('credits-left')), '15,000,000')
      await assertOwnOnly(a)
    })

    it('the session signed in through the first gateway is good on the last', async () => {
      // Both gateways listen on 127.0.0.1, on two ports. A cookie belongs to a host, not to a port
      // (RFC 6265 §8.5): the browser sends the first's cookie to the second as it would to two
      // instances behind one load balancer's name. Nothing is copied; the second accepts it because
      // it checks the cookie's MAC under the key both derive from the database they share.
      await b.bringToFront()
      await b.goto(`${gateways.b.url}/account/`)
      await portalNav(b, 'Overview').waitFor()
      assert.equal(await textOf(b.getByTestId('account-name')), 'acme')
      assert.equal(await b.getByLabel('Account token').count(), 0)
      assert.equal(await textOf(b.getByTestId('credits-left')), '15,000,000')
    })

    let made = ''

    it('lists the keys by name, makes one whose secret is shown once, rotates it, edits an allowlist', async () => {
      await a.bringToFront()
      await portalNav(a, 'Keys').click()
      await a.getByRole('button', { name: 'Manage key web' }).waitFor()
      const form = a.getByRole('form', { name: 'Create a key' })
      await form.getByLabel('Name', { exact: true }).fill('browser-app')
      await form.getByLabel('Make a secret (shown once)').check()
      await form.getByRole('button', { name: 'Create key' }).click()
      made = await textOf(a.getByTestId('created-key'))
      const secret = await textOf(a.getByTestId('created-secret'))
      assert.match(made, /^[0-9a-f]{32}$/)
      assert.match(secret, /^[0-9a-f]{32}$/)
      await a.getByRole('button', { name: 'Done' }).click()
      await a.getByRole('button', { name: 'Manage key browser-app' }).waitFor()
      await a.reload()
      await a.getByRole('button', { name: 'Manage key browser-app' }).click()
      assert.ok(!(await a.content()).includes(secret), 'the secret is not shown again')
      assert.equal((await admin('GET', `/keys/${made}`)).account, 'acme')
      // made through the first gateway, listed by the last
      await b.bringToFront()
      await portalNav(b, 'Keys').click()
      await b.getByRole('button', { name: 'Manage key browser-app' }).waitFor()

      await a.bringToFront()
      await portalPart(a, 'Secret').getByRole('button', { name: 'Rotate the secret' }).click()
      const rotated = await textOf(portalPart(a, 'Secret').getByTestId('created-secret'))
      assert.match(rotated, /^[0-9a-f]{32}$/)
      assert.notEqual(rotated, secret)
      await portalPart(a, 'Secret').getByRole('button', { name: 'Done' }).click()
      await gateways.refreshKeys()
      const basic = (value: string) => ({
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`:${value}`).toString('base64')}`,
      })
      for (const gateway of gateways.all) {
        const endpoint = `${gateway.url}/v3/${made}`
        assert.equal((await postJson(endpoint, rpcBody('eth_chainId'), basic(secret))).status, 401)
        assert.equal((await postJson(endpoint, rpcBody('eth_chainId'), basic(rotated))).status, 200)
      }

      const origins = portalPart(a, 'Allowlists').getByRole('form', { name: 'Add to Origins' })
      await origins.getByLabel('Add origins').fill('https://app.example.com')
      await origins.getByRole('button', { name: 'Add' }).click()
      await portalPart(a, 'Allowlists').getByText('https://app.example.com').waitFor()
      const shown = (await admin('GET', `/keys/${made}`)) as { allowlists: { origins: string[] } }
      assert.deepEqual(shown.allowlists.origins, ['https://app.example.com'])

      const security = portalPart(a, 'Security')
      await security.getByLabel('Require the secret').check()
      await security.getByRole('button', { name: 'Save security' }).click()
      await security.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
      assert.equal((await admin('GET', `/keys/${made}`)).requireSecret, true)
      // the operator's choices are not offered
      assert.equal(await a.getByText('Partner failover for every request').count(), 0)
      assert.equal(await portalPart(a, 'Networks').count(), 0)
      await assertOwnOnly(a)
    })

    it('shows the calls made through every gateway by day, method, network and key, the same on each', async () => {
      await call(gateways.a, keys.web as string, 3)
      await call(gateways.b, keys.web as string, 2)
      assert.equal(
        (await postJson(`${gateways.b.url}/v3/${keys.rival}`, rpcBody('eth_blockNumber'))).status,
        200,
      )
      await gateways.flush()
      const shown: string[][][] = []
      for (const page of [a, b]) {
        await page.bringToFront()
        await portalNav(page, 'Usage').click()
        // by name; the other key's call (its rotated secret's, above) is then left out
        await until(
          async () =>
            (await page.getByLabel('Key', { exact: true }).locator('option', { hasText: 'web' }).count()) ===
            1,
          'the key in the filter',
        )
        await page.getByLabel('Key', { exact: true }).selectOption('web')
        const byMethod = page.getByRole('table', { name: 'By method' })
        await until(
          async () => (await rowCells(byMethod, 'eth_chainId'))[0]?.[1] === '5',
          'the calls through both gateways in the usage page',
        )
        // the other account's call is not the account's
        assert.equal(await byMethod.locator('tbody tr', { hasText: 'eth_blockNumber' }).count(), 0)
        const byKey = page.getByRole('table', { name: 'By key' })
        await byKey.locator('tbody tr', { hasText: 'web' }).waitFor()
        shown.push([...(await rowCells(byMethod, '')), ...(await rowCells(byKey, ''))])
        await page.locator('figure canvas').first().waitFor()
        await assertOwnOnly(page)
      }
      assert.deepEqual(shown[1], shown[0])
      // today's credits left: the same through either, both gateways' calls counted
      const left: string[] = []
      for (const page of [a, b]) {
        await page.bringToFront()
        await portalNav(page, 'Overview').click()
        left.push(await textOf(page.getByTestId('credits-left')))
      }
      assert.equal(left[1], left[0])
      assert.ok(Number(left[0]?.replaceAll(',', '')) <= 15_000_000 - 25, left[0])
    })

    it('shows the calls made through every gateway in the request log, the same on each', async () => {
      const shown: Record<string, string>[][] = []
      for (const page of [a, b]) {
        await page.bringToFront()
        await portalNav(page, 'Requests').click()
        await page.getByLabel('Key (name or key)', { exact: true }).fill('web')
        await page.getByRole('button', { name: 'Apply' }).click()
        let rows: Record<string, string>[] = []
        await until(
          async () => {
            rows = await shownRequests(page)
            return rows.length === 5
          },
          `the five calls of key web: ${JSON.stringify(rows)}`,
        )
        assert.ok(
          rows.every((row) => row.key === 'web' && row.method === 'eth_chainId'),
          JSON.stringify(rows),
        )
        shown.push(rows)
        await assertOwnOnly(page)
      }
      assert.deepEqual(shown[1], shown[0])
    })

    it('turns usage alerts on; past a threshold through every gateway, one delivery, in both delivery logs', async () => {
      await a.bringToFront()
      await portalNav(a, 'Alerts').click()
      await a.getByRole('heading', { level: 1, name: 'Alerts' }).waitFor()
      assert.equal(await textOf(a.getByTestId('alerts-state')), 'Alerts are off.')
      await a.getByLabel('Webhook URL').fill(`${receiver.url}/acme`)
      await a.getByLabel('Thresholds (% of daily credits)').fill('50')
      await a.getByRole('button', { name: 'Turn alerts on' }).click()
      const secret = await textOf(a.getByTestId('created-secret'))
      assert.match(secret, /^tgw_[0-9a-f]{64}$/)
      assert.equal(await textOf(a.getByTestId('alerts-state')), 'Alerts are on.')
      await a.getByRole('table', { name: 'Deliveries' }).waitFor()
      // the operator sees what the key holder set, never the secret
      const shown = await admin('GET', '/accounts/acme/alerts')
      assert.equal(shown.webhook, `${receiver.url}/acme`)
      assert.ok(!JSON.stringify(shown).includes(secret))
      await a.getByRole('button', { name: 'Done' }).click()
      assert.equal(await a.getByTestId('created-secret').count(), 0)

      // 10 of the key's 20 credits, then 20: half of it through each gateway, and each written, so
      // every instance looks at a total past 50% (the database decides which one makes the event)
      for (let round = 0; round < 2; round++) {
        for (const gateway of gateways.all)
          await call(gateway, keys.metered as string, 2 / gateways.all.length)
        await gateways.flush()
      }
      // delivered, as the database says (the receiver has it a moment before its answer is recorded)
      await until(async () => {
        const { deliveries } = (await admin('GET', '/accounts/acme/alerts/deliveries')) as {
          deliveries: { status: string }[]
        }
        return deliveries.some((delivery) => delivery.status === 'delivered')
      }, 'the 50% event delivered')
      const logs: string[][][] = []
      for (const page of [a, b]) {
        await page.bringToFront()
        await portalNav(page, 'Alerts').click()
        // loaded afresh: an open page asks for the log again only every 10 s
        await page.reload()
        const deliveries = page.getByRole('table', { name: 'Deliveries' })
        await deliveries.getByRole('cell', { name: 'delivered', exact: true }).waitFor()
        const rows = await rowCells(deliveries, '')
        assert.deepEqual(
          rows.map((cells) => cells.slice(1, 6)),
          [['credits', 'metered', '50%', 'delivered', '1']],
        )
        logs.push(rows)
        await assertOwnOnly(page)
      }
      assert.deepEqual(logs[1], logs[0])
      assert.deepEqual(
        receiver.received.map((got) => [got.path, got.answer]),
        [['/acme', 200]],
      )
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
      await phonePage.goto(`${gateways.a.url}/account/#/overview`)
      for (const name of ['Overview', 'Keys', 'Usage', 'Alerts', 'Requests']) {
        await portalNav(phonePage, name).click()
        await phonePage.getByRole('heading', { level: 1 }).first().waitFor()
        if (name === 'Keys') {
          await phonePage.getByRole('button', { name: 'Manage key browser-app' }).click()
          await phonePage.getByRole('heading', { level: 2, name: /^Key / }).waitFor()
        }
        if (name === 'Usage') await phonePage.getByRole('table', { name: 'By method' }).waitFor()
        if (name === 'Alerts')
          await phonePage
            .getByRole('table', { name: 'Deliveries' })
            .getByRole('cell', { name: 'delivered', exact: true })
            .waitFor()
        if (name === 'Requests')
          await phonePage.getByRole('table', { name: 'Errors and refused calls by reason' }).waitFor()
        await overflow(`portal ${name}`)
      }
      // the dashboard, signed in by its link
      await phonePage.goto(`${gateways.a.url}/dashboard?token=${adminToken}`)
      for (const name of ['Overview', 'Usage', 'Keys', 'Gas']) {
        await phonePage
          .getByRole('navigation', { name: 'Dashboard pages' })
          .getByRole('link', { name })
          .click()
        await phonePage.getByRole('heading', { level: 1, name }).waitFor()
        if (name === 'Keys') await phonePage.getByRole('table', { name: 'API keys' }).waitFor()
        await overflow(`dashboard ${name}`)
      }
      await phonePage.close()
    })

    it('revokes a key through the last gateway after a confirmation; signing out ends the session on both', async () => {
      // a change through the last gateway: the session's CSRF token is good there too
      await b.bringToFront()
      await portalNav(b, 'Keys').click()
      await b.getByRole('button', { name: 'Manage key browser-app' }).click()
      await b.getByRole('button', { name: 'Revoke…' }).click()
      await b.getByRole('button', { name: 'Revoke browser-app' }).click()
      await b.getByRole('button', { name: 'Manage key browser-app' }).waitFor({ state: 'detached' })
      assert.equal((await admin('GET', `/keys/${made}`)).error !== undefined, true)
      await a.bringToFront()
      await a.reload()
      await portalNav(a, 'Keys').click()
      await a.getByRole('button', { name: 'Manage key web' }).waitFor()
      assert.equal(await a.getByRole('button', { name: 'Manage key browser-app' }).count(), 0)
      // the cookie the browser holds for the host is cleared: neither gateway's page is signed in
      await a.getByRole('button', { name: 'Sign out' }).click()
      await a.getByLabel('Account token').waitFor()
      for (const page of [a, b]) {
        await page.bringToFront()
        await page.reload()
        await page.getByLabel('Account token').waitFor()
      }
      assert.deepEqual(pageErrors, [])
      assert.deepEqual(elsewhere, [])
    })
  })
}
