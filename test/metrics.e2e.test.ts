import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { openSocket } from './helpers/openSocket.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const metricName = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const labelPair = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"'
const sampleLine = new RegExp(
  `^(${metricName})(\\{(?:${labelPair}(?:,${labelPair})*)?\\})? (-?\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?|[Nn]a[Nn]|[+-]Inf)$`,
)
const typeLine = new RegExp(`^# TYPE (${metricName}) (counter|gauge|histogram|summary|untyped)$`)
const helpLine = new RegExp(`^# HELP ${metricName} .*$`)

/**
 * The Prometheus text format, strictly (values as Prometheus parses them: prom-client writes `Nan`): every line is a HELP, a TYPE or a sample of a declared
 * family (histograms and summaries add _bucket, _sum and _count). Returns `name{labels}` → value.
 */
function parseExposition(text: string): Map<string, number> {
  assert.ok(text.endsWith('\n'), 'the text ends with a newline')
  const families = new Map<string, string>()
  const samples = new Map<string, number>()
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue
    const type = typeLine.exec(line)
    if (type) {
      assert.ok(!families.has(type[1] as string), `${type[1]} declared twice`)
      families.set(type[1] as string, type[2] as string)
      continue
    }
    if (helpLine.test(line)) continue
    const sample = sampleLine.exec(line)
    assert.ok(sample, `not a Prometheus text line: ${line}`)
    const name = sample[1] as string
    const family = families.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '')
    assert.ok(families.has(family), `${name} has no TYPE line before it`)
    const series = `${name}${sample[2] ?? ''}`
    assert.ok(!samples.has(series), `${series} appears twice`)
    samples.set(series, Number(sample[3]))
  }
  return samples
}

async function scrape(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/metrics`, { headers })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

async function nodeRpc(node: TestNode, method: string, params: unknown[] = []): Promise<unknown> {
  return ((await postJson(node.url, rpcBody(method, params))).json as { result: unknown }).result
}

describe('/metrics', () => {
  let node: TestNode
  let gateway: TestGateway
  let upstream: string
  let partner: string

  before(async () => {
    node = await startTestNode({ loadBlocks: 5 })
    const { host } = new URL(node.url)
    // credentials and a vendor key in the URL (anvil answers on / only, whatever the query string):
    // metrics name the upstream by its redacted label only
    const credentialed = `http://user:s3cret@${host}/?apikey=vendorkey123`
    upstream = `http://…@${host}`
    partner = 'partner-anvil'
    gateway = await startTestGateway({
      config: {
        networks: [
          {
            name: 'devnet',
            chainId: 31337,
            upstreams: [{ url: credentialed }],
            partners: [{ url: node.url, name: partner }],
          },
        ],
        // the head tracker's poll at start is its only one here (head polls are not upstream requests)
        upstreams: { headPollMs: 600_000 },
      },
    })
    await until(() => gateway.app.networks.all[0]?.head.finalized() !== undefined, 'the first head poll')
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  it('reads the cache, upstream and answer counters at scrape time, in the Prometheus text format', async () => {
    const before = parseExposition((await scrape(gateway.url)).text)
    for (const id of [1, 2]) {
      const response = await postJson(gateway.endpoint, rpcBody('eth_chainId', [], id))
      assert.deepEqual(response.json, { jsonrpc: '2.0', id, result: '0x7a69' })
    }
    const response = await scrape(gateway.url)
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
    const after = parseExposition(response.text)
    const delta = (series: string) => (after.get(series) ?? 0) - (before.get(series) ?? 0)

    const network = '{network="devnet"}'
    const primary = `{network="devnet",upstream="${upstream}",role="primary"}`
    const partnerSeries = `{network="devnet",upstream="${partner}",role="partner"}`
    // the first call missed and went to the upstream; the second was served from the cache
    assert.equal(delta(`tollgate_cache_misses_total${network}`), 1)
    assert.equal(delta(`tollgate_cache_hits_total${network}`), 1)
    assert.equal(delta(`tollgate_upstream_requests_total${primary}`), 1)
    assert.equal(after.get(`tollgate_upstream_failures_total${primary}`), 0)
    assert.equal(after.get(`tollgate_upstream_requests_total${partnerSeries}`), 0)
    assert.equal(delta('tollgate_http_rpc_responses_total{status_class="2xx"}'), 2)
    assert.equal(after.get(`tollgate_cache_coalesced_total${network}`), 0)
    assert.equal(after.get(`tollgate_cache_evictions_total${network}`), 0)
    assert.ok((after.get(`tollgate_cache_entries${network}`) ?? 0) >= 1)
    assert.ok((after.get(`tollgate_cache_bytes${network}`) ?? 0) > 0)

    assert.equal(after.get(`tollgate_upstream_up${primary}`), 1)
    assert.equal(after.get(`tollgate_upstream_up${partnerSeries}`), 1)
    assert.equal(after.get(`tollgate_upstream_error_rate${primary}`), 0)
    assert.ok((after.get(`tollgate_upstream_latency_ms${primary}`) ?? -1) >= 0)
    // no blocks are mined during the test: the gateway's heads are the node's
    const head = Number(await nodeRpc(node, 'eth_blockNumber'))
    assert.ok(head > 0)
    assert.equal(after.get(`tollgate_upstream_head${primary}`), head)
    assert.equal(after.get(`tollgate_network_head${network}`), head)
    const finalized = (await nodeRpc(node, 'eth_getBlockByNumber', ['finalized', false])) as {
      number: string
    }
    assert.equal(after.get(`tollgate_network_finalized${network}`), Number(finalized.number))

    // prom-client's process metrics are there too
    assert.ok(after.has('process_cpu_user_seconds_total'))
    assert.ok(after.has('nodejs_heap_size_used_bytes'))
  })

  it('counts refused JSON-RPC answers by status class', async () => {
    const before = parseExposition((await scrape(gateway.url)).text)
    const refused = await postJson(`${gateway.url}/v3/not-a-key`, rpcBody('eth_chainId'))
    assert.equal(refused.status, 401)
    const after = parseExposition((await scrape(gateway.url)).text)
    const series = 'tollgate_http_rpc_responses_total{status_class="4xx"}'
    assert.equal((after.get(series) ?? 0) - (before.get(series) ?? 0), 1)
  })

  it('never shows an upstream URL or its credentials', async () => {
    const { text } = await scrape(gateway.url)
    for (const secret of ['s3cret', 'vendorkey123', 'user:'])
      assert.ok(!text.includes(secret), `leaked ${secret}`)
    assert.ok(text.includes(`upstream="${upstream}"`))
  })

  it("shows the build: tollgate's version and the Node.js version, as 1", async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string
    }
    const after = parseExposition((await scrape(gateway.url)).text)
    assert.equal(after.get(`tollgate_build_info{version="${version}",node="${process.version}"}`), 1)
    assert.equal([...after.keys()].filter((series) => series.startsWith('tollgate_build_info')).length, 1)
  })

  it('answers GET only', async () => {
    const response = await fetch(`${gateway.url}/metrics`, { method: 'POST', body: '{}' })
    assert.equal(response.status, 405)
  })
})

describe('/metrics: how long requests took the gateway, by network and transport', () => {
  let node: TestNode
  let slow: FakeUpstream
  let gateway: TestGateway
  const slowMs = 300

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    // eth_getBalance answered slowMs late; everything else (head polls) forwarded to anvil
    slow = await startFakeUpstream({
      kind: 'rewrite',
      target: node.url,
      respond: (request) =>
        request.method === 'eth_getBalance'
          ? new Promise((resolve) => setTimeout(() => resolve('0x0'), slowMs))
          : undefined,
    })
    gateway = await startTestGateway({
      config: {
        networks: [
          { name: 'fast', chainId: 31337, upstreams: [{ url: node.url }] },
          { name: 'slow', chainId: 31337, upstreams: [{ url: slow.url }] },
        ],
        cache: { enabled: false },
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await slow?.close()
    await node?.stop()
  })

  it('times HTTP requests and WebSocket messages from arrival to answer, per network', async () => {
    const { url, key } = gateway
    const balance = rpcBody('eth_getBalance', ['0x0000000000000000000000000000000000000001', 'latest'])
    assert.equal((await postJson(`${url}/slow/v3/${key}`, balance)).status, 200)
    for (const id of [1, 2])
      assert.equal((await postJson(`${url}/fast/v3/${key}`, rpcBody('eth_chainId', [], id))).status, 200)
    // a network nobody configured: answered 404, counted as (none)
    assert.equal((await postJson(`${url}/nowhere/v3/${key}`, rpcBody('eth_chainId'))).status, 404)
    const socket = await openSocket(`${url.replace('http', 'ws')}/slow/ws/v3/${key}`)
    try {
      socket.socket.send(JSON.stringify({ ...balance, id: 9 }))
      await until(() => socket.messages.length === 1, 'the WebSocket answer')
      assert.equal(socket.messages[0]?.result, '0x0')
    } finally {
      socket.socket.close()
    }
    // the WebSocket message is counted once its answer is sent, just after the client could read it
    const read = async () => parseExposition((await scrape(gateway.url)).text)
    const name = 'tollgate_request_duration_seconds'
    const series = (network: string, transport: string) => `{network="${network}",transport="${transport}"}`
    await until(async () => (await read()).get(`${name}_count${series('slow', 'ws')}`) === 1, 'the ws count')
    const after = await read()

    assert.equal(after.get(`${name}_count${series('slow', 'http')}`), 1)
    assert.equal(after.get(`${name}_count${series('fast', 'http')}`), 2)
    assert.equal(after.get(`${name}_count${series('(none)', 'http')}`), 1)
    assert.equal(after.has(`${name}_count${series('fast', 'ws')}`), false)
    for (const transport of ['http', 'ws']) {
      const labels = (le: string) => `{network="slow",transport="${transport}",le="${le}"}`
      // the upstream's wait is the gateway's time: nothing below it, all of it in the sum
      assert.equal(after.get(`${name}_bucket${labels('0.25')}`), 0, transport)
      assert.equal(after.get(`${name}_bucket${labels('+Inf')}`), 1, transport)
      assert.ok((after.get(`${name}_sum${series('slow', transport)}`) ?? 0) >= slowMs / 1000, transport)
    }
    assert.equal(after.get(`${name}_bucket{network="fast",transport="http",le="+Inf"}`), 2)
  })
})

describe('/metrics settings', () => {
  let node: TestNode

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
  })
  after(async () => {
    await node?.stop()
  })

  it('with a token: 401 without it or with another, 200 with it', async () => {
    const token = 'metrics-token-0123456789'
    const gateway = await startTestGateway({ upstreams: [node.url], config: { metrics: { token } } })
    try {
      for (const headers of [
        {},
        { authorization: 'Bearer metrics-token-wrong-123' },
        { authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` },
        { authorization: token },
      ]) {
        const response = await scrape(gateway.url, headers)
        assert.equal(response.status, 401, JSON.stringify(headers))
        assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="metrics"')
        // JSON, like the route's 404 and 405 (docs/errors.md: MetricsTokenRequiredError)
        assert.equal(response.headers.get('content-type'), 'application/json')
        assert.deepEqual(JSON.parse(response.text), {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32001, message: 'metrics token required: Authorization: Bearer <token>' },
        })
      }
      const response = await scrape(gateway.url, { authorization: `Bearer ${token}` })
      assert.equal(response.status, 200)
      parseExposition(response.text)
      assert.ok(response.text.includes('tollgate_upstream_up{'))
    } finally {
      await gateway.close()
    }
  })

  it('disabled: /metrics is not found, like any unknown route', async () => {
    const gateway = await startTestGateway({ upstreams: [node.url], config: { metrics: { enabled: false } } })
    try {
      const response = await scrape(gateway.url)
      const unknown = await fetch(`${gateway.url}/nothing-here`)
      assert.equal(unknown.status, 404)
      assert.equal(response.status, 404)
      assert.equal(response.text, await unknown.text())
    } finally {
      await gateway.close()
    }
  })
})
