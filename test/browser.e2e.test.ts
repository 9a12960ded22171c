import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { build } from 'esbuild'
import type { Browser, Page } from 'playwright-core'
import { launchChromium } from './helpers/launchChromium.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { devnetOver, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'
import { untilAnnounced } from './helpers/untilAnnounced.ts'

/** viem as one script for the page: served by the test, so the page needs no network beyond 127.0.0.1. */
async function bundleViem(): Promise<string> {
  const result = await build({
    stdin: {
      contents: "export { createPublicClient, http, webSocket } from 'viem'",
      resolveDir: process.cwd(),
    },
    bundle: true,
    format: 'iife',
    globalName: 'viem',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  })
  return result.outputFiles[0]?.text ?? ''
}

/** A dapp's origin: another port of 127.0.0.1 is another origin to the browser. */
async function startPageServer(script: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    if (req.url === '/viem.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' })
      res.end(script)
      return
    }
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<!doctype html><html><head><script src="/viem.js"></script></head><body>dapp</body></html>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return { server, origin: `http://127.0.0.1:${port}` }
}

type BrowserFetch =
  | { status: number; body: unknown; headers: Record<string, string | null> }
  | { error: string }

/** fetch() from the page: what a dapp's script can read of the answer (or the browser's refusal). */
function fetchFromPage(
  page: Page,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) {
  return page.evaluate(
    async ({ url, init }): Promise<BrowserFetch> => {
      try {
        const response = await fetch(url, init)
        const names = [
          'x-credits-charged',
          'x-credits-remaining',
          'x-ratelimit-reset',
          'retry-after',
          'content-encoding',
        ]
        const headers = Object.fromEntries(names.map((name) => [name, response.headers.get(name)]))
        return { status: response.status, body: await response.json(), headers }
      } catch (err) {
        return { error: String(err) }
      }
    },
    { url, init },
  )
}

describe('browsers: a page on another origin calls tollgate (real Chromium)', () => {
  let node: TestNode
  let gateway: TestGateway
  let pinned: TestGateway
  let pageServer: Server
  let origin: string
  let browser: Browser
  let page: Page

  before(async () => {
    node = await startTestNode({ loadBlocks: 10 })
    gateway = await startTestGateway({
      config: { networks: devnetOver(node), gas: { enabled: true } },
    })
    // CORS pinned to another site: this page may not call it at all
    pinned = await startTestGateway({
      upstreams: [node.url],
      config: { server: { host: '127.0.0.1', port: 0, cors: { origins: ['https://elsewhere.example'] } } },
    })
    ;({ server: pageServer, origin } = await startPageServer(await bundleViem()))
    browser = await launchChromium()
    page = await browser.newPage()
    // tsx keeps function names with a helper the page does not have; functions sent to it need it
    await page.addInitScript('globalThis.__name = (fn) => fn')
    await page.goto(`${origin}/`)
    const indexer = gateway.app.indexers.get(31337)
    const head = Number(
      ((await postJson(node.url, rpcBody('eth_blockNumber'))).json as { result: string }).result,
    )
    await until(async () => {
      await indexer?.tick()
      return (indexer?.window()?.head ?? -1) >= head
    }, 'the gas indexer')
  })
  after(async () => {
    await browser?.close()
    pageServer?.close()
    await pinned?.close()
    await gateway?.close()
    await node?.stop()
  })

  it('viem over HTTP: the same answers as the node, and the credit headers are readable', async () => {
    const endpoint = gateway.endpoint
    const fromPage = await page.evaluate(async (endpoint) => {
      const { createPublicClient, http } = (globalThis as unknown as { viem: typeof import('viem') }).viem
      const client = createPublicClient({ transport: http(endpoint) })
      const block = await client.getBlock({ blockNumber: 3n })
      return { chainId: await client.getChainId(), hash: block.hash, transactions: block.transactions.length }
    }, endpoint)
    const direct = (await postJson(node.url, rpcBody('eth_getBlockByNumber', ['0x3', false]))).json as {
      result: { hash: string; transactions: string[] }
    }
    assert.deepEqual(fromPage, {
      chainId: 31337,
      hash: direct.result.hash,
      transactions: direct.result.transactions.length,
    })

    const answer = await fetchFromPage(page, endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(rpcBody('eth_chainId')),
    })
    assert.ok('status' in answer, JSON.stringify(answer))
    assert.equal(answer.status, 200)
    assert.deepEqual(answer.body, { jsonrpc: '2.0', id: 1, result: '0x7a69' })
    assert.equal(answer.headers['x-credits-charged'], '5')
    assert.match(answer.headers['x-credits-remaining'] ?? '', /^\d+$/)
    assert.match(answer.headers['x-ratelimit-reset'] ?? '', /^\d+$/)
  })

  it('viem over WebSocket: calls and a block subscription', async () => {
    const wsUrl = `${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`
    const watching = page.evaluate(async (wsUrl) => {
      const { createPublicClient, webSocket } = (globalThis as unknown as { viem: typeof import('viem') })
        .viem
      const client = createPublicClient({ transport: webSocket(wsUrl) })
      const chainId = await client.getChainId()
      const seen = await new Promise<bigint>((resolve) => {
        const stop = client.watchBlockNumber({
          emitOnBegin: false,
          onBlockNumber: (number) => {
            stop()
            resolve(number)
          },
        })
      })
      return { chainId, seen: Number(seen) }
    }, wsUrl)
    // new blocks until the page has seen one (anvil mines on request here)
    let settled = false
    void watching.finally(() => {
      settled = true
    })
    const before = Number(
      ((await postJson(node.url, rpcBody('eth_blockNumber'))).json as { result: string }).result,
    )
    await untilAnnounced(
      () => postJson(node.url, rpcBody('anvil_mine', ['0x1'])),
      () => settled,
    )
    const { chainId, seen } = await watching
    assert.equal(chainId, 31337)
    assert.ok(seen > before, `a block after ${before}: ${seen}`)
  })

  it('the Gas API with HTTP Basic auth (a preflighted request), compressed when large', async () => {
    const answer = await page.evaluate(
      async ({ url, key }) => {
        const response = await fetch(`${url}/networks/31337/suggestedGasFees`, {
          headers: { authorization: `Basic ${btoa(`${key}:`)}` },
        })
        return { status: response.status, body: await response.json() }
      },
      { url: gateway.url, key: gateway.key },
    )
    assert.equal(answer.status, 200)
    const direct = await fetch(`${gateway.url}/v3/${gateway.key}/networks/31337/suggestedGasFees`)
    assert.deepEqual(answer.body, await direct.json())

    const block = await fetchFromPage(page, gateway.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(rpcBody('eth_getBlockByNumber', ['0x3', true])),
    })
    assert.ok('status' in block, JSON.stringify(block))
    assert.equal(block.status, 200)
    const direct3 = (await postJson(node.url, rpcBody('eth_getBlockByNumber', ['0x3', true]))).json
    assert.deepEqual(block.body, direct3)
  })

  it("a refusal is readable: the key's origins allowlist answers 403 with CORS headers", async () => {
    const {
      key: { key },
    } = await gateway.app.keyAdmin.create({ plan: 'team', name: 'elsewhere only' })
    await gateway.app.keyAdmin.addAllowlistEntries(key, 'origins', ['https://elsewhere.example'])
    await gateway.app.keys.refresh()
    const answer = await fetchFromPage(page, `${gateway.url}/v3/${key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(rpcBody('eth_chainId')),
    })
    assert.ok('status' in answer, JSON.stringify(answer))
    assert.equal(answer.status, 403)
    // refused from the request's headers, its body unread: the id is not known
    assert.deepEqual(answer.body, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32002, message: 'rejected due to project ID settings' },
    })
  })

  it('a gateway whose CORS is pinned to other sites cannot be called from this page', async () => {
    const answer = await fetchFromPage(page, pinned.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(rpcBody('eth_chainId')),
    })
    assert.ok('error' in answer, `the browser should refuse: ${JSON.stringify(answer)}`)
    assert.match(answer.error, /Failed to fetch/)
  })
})
