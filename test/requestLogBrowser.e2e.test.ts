import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { encodeFunctionData } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import type { RequestView } from '../src/requestLog/readRequestLog.ts'
import { ensureDashboardBuilt } from './helpers/ensureDashboardBuilt.ts'
import { launchChromium } from './helpers/launchChromium.ts'
import { shownRequests } from './helpers/portalPage.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const adminToken = 'request-log-browser-admin-token-0123'
const phone = { width: 375, height: 800 }

/** A row of the request log's table, by its columns' names; the fields the filters choose by. */
type ShownRow = { key: string; network: string; method: string; outcome: string; account?: string }

/**
 * The request log in a real browser, the key holder's (portal) and the operator's (dashboard): calls
 * of two accounts (every successful one logged: sample rate 1; a refused one; a node's error), seen in
 * each page's table; each filter narrows it; the portal's summary; the NDJSON export holds the rows
 * the filters match; a phone's width; never another account's row in the portal.
 */
describe('request log in a real browser (Chromium)', () => {
  let node: TestNode
  let mainnet: FakeUpstream
  let gateway: TestGateway
  let browser: Browser
  let context: BrowserContext
  let page: Page
  const pageErrors: string[] = []
  const keys: Record<string, string> = {}
  const tokens: Record<string, string> = {}

  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${gateway.url}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    assert.ok(response.status < 300, `${method} ${path}: ${response.status}`)
    return (await response.json()) as Record<string, unknown>
  }
  const rpc = (key: string, body: unknown, network = 'devnet') =>
    postJson(`${gateway.url}/${network}/v3/${key}`, body, { 'content-type': 'application/json' })
  /** The account's rows as the account API answers them (the operator's: every account's). */
  const logged = async (query = ''): Promise<RequestView[]> => {
    const response = await fetch(`${gateway.url}/admin/requests?limit=1000${query}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    })
    return ((await response.json()) as { requests: RequestView[] }).requests
  }
  /** The log's table as shown: each row's cells by their column's name. */
  const shownRows = async (on: Page) => (await shownRequests(on)) as ShownRow[]
  /** The same rows as `expected`, in any order (by key, network, method and outcome). */
  const sameRows = (shown: ShownRow[], expected: RequestView[], byAccount = false) => {
    const text = (row: ShownRow | RequestView) =>
      [byAccount ? row.account : '', row.network, row.method, row.outcome].join('|')
    const keyOf = (row: RequestView) => row.keyName ?? ''
    return (
      JSON.stringify(shown.map((row) => `${row.key}|${text(row)}`).sort()) ===
      JSON.stringify(expected.map((row) => `${keyOf(row)}|${text(row)}`).sort())
    )
  }
  /** Waits for the table to show exactly `expected`. */
  const untilShown = async (on: Page, expected: RequestView[], what: string, byAccount = false) => {
    let last: ShownRow[] = []
    await until(
      async () => {
        last = await shownRows(on)
        return sameRows(last, expected, byAccount)
      },
      `${what}: ${JSON.stringify(last)}`,
    )
  }
  /** Sets the filters named (the others cleared) and applies them. */
  const filter = async (
    on: Page,
    set: Partial<Record<'Account' | 'Key' | 'Network' | 'Method', string>> & { Outcome?: string },
  ) => {
    for (const name of ['Account', 'Key', 'Network', 'Method'] as const) {
      const label = name === 'Key' ? 'Key (name or key)' : name
      const field = on.getByLabel(label, { exact: true })
      if ((await field.count()) > 0) await field.fill(set[name] ?? '')
    }
    await on.getByLabel('Outcome', { exact: true }).selectOption(set.Outcome ?? '')
    await on.getByRole('button', { name: 'Apply' }).click()
  }
  /** The export link's rows, downloaded as a browser does. */
  const exported = async (on: Page): Promise<RequestView[]> => {
    const [download] = await Promise.all([
      on.waitForEvent('download'),
      on.getByRole('link', { name: 'Export NDJSON' }).click(),
    ])
    const text = readFileSync((await download.path()) ?? assert.fail('no download'), 'utf8')
    return text
      .trimEnd()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as RequestView)
  }
  const assertFits = async (on: Page, name: string) => {
    const wider = Number(await on.evaluate('document.documentElement.scrollWidth - window.innerWidth'))
    assert.ok(wider <= 0, `${name} at 375 px overflows by ${wider} px`)
  }

  before(async () => {
    ensureDashboardBuilt()
    node = await startTestNode({ loadBlocks: 1 })
    mainnet = await startFakeUpstream({ kind: 'json', respond: () => '0x1' })
    gateway = await startTestGateway({
      config: {
        admin: { token: adminToken },
        networks: [
          { name: 'devnet', chainId: 31337, upstreams: [{ name: 'anvil', url: node.url }] },
          { name: 'mainnet', chainId: 1, upstreams: [{ name: 'fake', url: mainnet.url }] },
        ],
        requestLog: { sampleRate: 1 },
      },
    })
    keys.web = (await admin('POST', '/keys', { account: 'acme', plan: 'developer', name: 'web' }))
      .key as string
    keys.locked = (await admin('POST', '/keys', { account: 'acme', name: 'locked' })).key as string
    keys.rival = (await admin('POST', '/keys', { account: 'globex', name: 'rival-app' })).key as string
    await admin('POST', `/keys/${keys.locked}/allowlists/methods`, { entries: ['eth_chainId'] })
    for (const account of ['acme', 'globex'])
      tokens[account] = (await admin('POST', `/accounts/${account}/token`)).token as string
    await gateway.app.keys.refresh()

    const web = keys.web as string
    const revert = [
      { to: node.fixtures.demo, data: encodeFunctionData({ abi: demoAbi, functionName: 'failWithReason' }) },
      'latest',
    ]
    for (let id = 0; id < 2; id++) assert.equal((await rpc(web, rpcBody('eth_chainId', [], id))).status, 200)
    assert.equal((await rpc(web, rpcBody('eth_blockNumber'))).status, 200)
    assert.equal((await rpc(web, rpcBody('eth_blockNumber'), 'mainnet')).status, 200)
    const reverted = await rpc(web, rpcBody('eth_call', revert))
    assert.equal((reverted.json as { error: { code: number } }).error.code, 3)
    assert.equal((await rpc(keys.locked as string, rpcBody('eth_blockNumber'))).status, 403)
    // the other account's: a successful call and an error of the same methods
    assert.equal((await rpc(keys.rival as string, rpcBody('eth_chainId'))).status, 200)
    assert.ok('error' in ((await rpc(keys.rival as string, rpcBody('eth_call', revert))).json as object))
    await gateway.app.requestLog?.flush()

    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true })
    page = await context.newPage()
    page.on('pageerror', (err) => pageErrors.push(err.message))
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        pageErrors.push(message.text())
    })
  })
  after(async () => {
    await browser?.close()
    await gateway?.close()
    await mainnet?.close()
    await node?.stop()
  })

  it('the portal shows the account’s calls, its summary, and narrows them by each filter', async () => {
    const acme = await logged('&account=acme')
    assert.equal(acme.length, 6, JSON.stringify(acme))
    await page.goto(`${gateway.url}/account/`)
    await page.getByLabel('Account token').fill(tokens.acme as string)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page
      .getByRole('navigation', { name: 'Account pages' })
      .getByRole('link', { name: 'Requests' })
      .click()
    await untilShown(page, acme, 'the account’s rows')

    // the summary: the error and the refusal by reason, the latency of the sampled calls
    await until(
      async () =>
        /^1 errors, 1 refused calls; latency p50 \d+ ms, p99 \d+ ms \(from 4 sampled successful calls\)$/.test(
          (await page.getByTestId('requests-summary').textContent()) ?? '',
        ),
      'the summary',
    )
    const reasons = page
      .getByRole('table', { name: 'Errors and refused calls by reason' })
      .locator('tbody tr')
    await reasons.filter({ hasText: 'Demo: not allowed' }).waitFor()
    const byReason = await reasons.evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent ?? '')),
    )
    assert.deepEqual(byReason.map((cells) => [cells[0], cells[1], cells[2], cells[4]]).sort(), [
      ['error', '200', '3', '1'],
      ['refused', '403', String(acme.find((row) => row.outcome === 'refused')?.code ?? ''), '1'],
    ])

    for (const [set, expected] of [
      [{ Key: 'locked' }, acme.filter((row) => row.keyName === 'locked')],
      [{ Network: 'mainnet' }, acme.filter((row) => row.network === 'mainnet')],
      [{ Method: 'eth_chainId' }, acme.filter((row) => row.method === 'eth_chainId')],
      [{ Outcome: 'error' }, acme.filter((row) => row.outcome === 'error')],
      [
        { Key: 'web', Method: 'eth_blockNumber' },
        acme.filter((row) => row.keyName === 'web' && row.method === 'eth_blockNumber'),
      ],
    ] as const) {
      assert.ok(expected.length > 0 && expected.length < acme.length, JSON.stringify(set))
      await filter(page, set)
      await untilShown(page, expected, `the rows of ${JSON.stringify(set)}`)
    }
    // the other account's key by name matches nothing here
    await filter(page, { Key: 'rival-app' })
    await untilShown(page, [], 'no row of the other account’s key')
    await page.getByText('No requests logged for these filters.').waitFor()

    // the export holds the rows the filters match, the account's alone
    await filter(page, { Outcome: 'error' })
    await untilShown(
      page,
      acme.filter((row) => row.outcome === 'error'),
      'the errors',
    )
    const errors = await exported(page)
    assert.deepEqual(errors, await logged('&account=acme&outcome=error'))
    assert.equal(errors.length, 1)
    await filter(page, {})
    await untilShown(page, acme, 'every row again')
    assert.deepEqual(await exported(page), acme)

    const html = await page.content()
    for (const other of ['rival-app', 'globex', keys.rival as string])
      assert.ok(!html.includes(other), `the other account’s ${other} is shown`)
  })

  it('the dashboard shows every account’s calls and narrows them by each filter, the account’s too', async () => {
    const everyone = await logged()
    assert.equal(everyone.length, 8, JSON.stringify(everyone))
    await page.goto(`${gateway.url}/dashboard?token=${adminToken}`)
    await page
      .getByRole('navigation', { name: 'Dashboard pages' })
      .getByRole('link', { name: 'Requests' })
      .click()
    await page.getByRole('heading', { level: 1, name: 'Requests' }).waitFor()
    await untilShown(page, everyone, 'every account’s rows', true)

    for (const [set, expected] of [
      [{ Account: 'globex' }, everyone.filter((row) => row.account === 'globex')],
      [{ Key: 'locked' }, everyone.filter((row) => row.keyName === 'locked')],
      [{ Network: 'mainnet' }, everyone.filter((row) => row.network === 'mainnet')],
      [{ Method: 'eth_call' }, everyone.filter((row) => row.method === 'eth_call')],
      [{ Outcome: 'refused' }, everyone.filter((row) => row.outcome === 'refused')],
      [
        { Account: 'acme', Outcome: 'error' },
        everyone.filter((row) => row.account === 'acme' && row.outcome === 'error'),
      ],
    ] as const) {
      assert.ok(expected.length > 0 && expected.length < everyone.length, JSON.stringify(set))
      await filter(page, set)
      await untilShown(page, expected, `the rows of ${JSON.stringify(set)}`, true)
    }
    await filter(page, { Method: 'eth_call' })
    await untilShown(
      page,
      everyone.filter((row) => row.method === 'eth_call'),
      'the eth_calls',
      true,
    )
    const calls = await exported(page)
    assert.deepEqual(calls, await logged('&method=eth_call'))
    assert.deepEqual(calls.map((row) => row.account).sort(), ['acme', 'globex'])
  })

  it('both Requests pages fit a phone’s width', async () => {
    const phonePage = await context.newPage()
    await phonePage.setViewportSize(phone)
    // the portal (its session cookie is the context's)
    await phonePage.goto(`${gateway.url}/account/#/requests`)
    await untilShown(phonePage, await logged('&account=acme'), 'the portal’s rows at phone width')
    await phonePage.getByTestId('requests-summary').filter({ hasText: '1 errors' }).waitFor()
    await assertFits(phonePage, 'portal Requests')
    await phonePage.goto(`${gateway.url}/dashboard#/requests`)
    await phonePage.getByRole('heading', { level: 1, name: 'Requests' }).waitFor()
    await untilShown(phonePage, await logged(), 'the dashboard’s rows at phone width', true)
    await assertFits(phonePage, 'dashboard Requests')
    await phonePage.close()
    assert.deepEqual(pageErrors, [])
  })
})
