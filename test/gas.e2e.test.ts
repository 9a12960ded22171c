import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { feeHistoryFromBlocks } from '../src/gas/feeHistoryFromBlocks.ts'
import { expectedGasAnswers, readNodeFees } from './helpers/expectedGasAnswers.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway, unlimitedKey } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const chainId = 31337

/** Until the fee indexer's window ends at `head` and holds the whole chain (a pass run at each look). */
async function waitForHead(gateway: TestGateway, head: number): Promise<void> {
  const indexer = gateway.app.indexers.get(chainId)
  assert.ok(indexer)
  const reached = () => indexer.window()?.head === head && (indexer.window()?.blocks.length ?? 0) >= head + 1
  await until(
    async () => {
      if (reached()) return true
      await indexer.tick().catch(() => undefined)
      return reached()
    },
    `the indexer to reach block ${head}`,
    60_000,
  )
}

describe('Gas REST API', () => {
  let node: TestNode
  let gateway: TestGateway
  let head: number

  before(async () => {
    node = await startTestNode({ loadBlocks: 2_000 })
    head = Number(((await postJson(node.url, rpcBody('eth_blockNumber'))).json as { result: string }).result)
    gateway = await startTestGateway({
      upstreams: [node.url],
      config: { gas: { enabled: true }, upstreams: { headPollMs: 200 } },
    })
    await waitForHead(gateway, head)
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}${path}`, { headers }).then(async (response) => ({
      status: response.status,
      headers: response.headers,
      json: (await response.json()) as unknown,
    }))
  const basic = (user: string, secret = '') => ({
    authorization: `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`,
  })

  it('each endpoint equals an independent computation over the node own blocks (2,000+ blocks)', async () => {
    assert.ok(head >= 2_000)
    const expected = expectedGasAnswers(await readNodeFees(node.url))
    assert.ok(new Set(expected.baseFeeHistory).size > 50, 'base fees vary')
    for (const [endpoint, answer] of Object.entries(expected)) {
      const viaBasic = await get(`/networks/${chainId}/${endpoint}`, basic(gateway.key))
      assert.equal(viaBasic.status, 200, endpoint)
      assert.deepEqual(viaBasic.json, answer, endpoint)
      assert.equal(viaBasic.headers.get('x-credits-charged'), '80')
      const viaPath = await get(`/v3/${gateway.key}/networks/${chainId}/${endpoint}`)
      assert.deepEqual(viaPath.json, answer, endpoint)
    }
  })

  it('for nodes that keep little fee history, the history computed from blocks equals the node own eth_feeHistory', async () => {
    const pool = gateway.app.networks.all[0]?.pool
    assert.ok(pool)
    const from = head - 300
    const computed = await feeHistoryFromBlocks(pool, from, head)
    const fromNode = (
      (
        await postJson(
          node.url,
          rpcBody('eth_feeHistory', ['0x12d', `0x${head.toString(16)}`, [0, 10, 20, 30, 100]]),
        )
      ).json as { result: typeof computed }
    ).result
    assert.equal(computed.oldestBlock, fromNode.oldestBlock)
    assert.deepEqual(computed.baseFeePerGas, fromNode.baseFeePerGas)
    assert.deepEqual(computed.reward, fromNode.reward)
    assert.deepEqual(
      computed.gasUsedRatio.map((ratio) => ratio.toFixed(12)),
      fromNode.gasUsedRatio.map((ratio) => ratio.toFixed(12)),
    )
    assert.ok(
      computed.reward?.some((row) => row[2] !== '0x0'),
      'blocks with tips are in the range',
    )
  })

  it('errors: unknown chain, missing or wrong auth, an exhausted balance', async () => {
    const unknown = await get('/networks/6001/baseFeePercentile', basic(gateway.key))
    assert.equal(unknown.status, 400)
    assert.deepEqual(unknown.json, { statusCode: 400, message: "'6001' is not a supported chain id." })
    // a chain tollgate does not serve is a network the key cannot use: free, like an unknown network
    assert.equal(unknown.headers.get('x-credits-charged'), null)

    const missing = await get(`/networks/${chainId}/baseFeePercentile`)
    assert.equal(missing.status, 401)
    assert.deepEqual(missing.json, {
      statusCode: 401,
      message:
        'API key required: send HTTP Basic auth (KEY:SECRET, secret optional) or use /v3/KEY/networks/...',
    })
    assert.equal(
      missing.headers.get('x-credits-charged'),
      null,
      'a request without a key is charged to nobody',
    )
    const wrongKey = await get(`/networks/${chainId}/baseFeePercentile`, basic('0'.repeat(32)))
    assert.deepEqual(wrongKey.json, { statusCode: 401, message: 'invalid project id' })

    const { key, secret } = await gateway.app.keyAdmin.create({ ...unlimitedKey, secret: true })
    const { key: poor } = await gateway.app.keyAdmin.create({
      plan: 'custom',
      dailyCredits: 100,
      creditsPerSecond: 1000,
    })
    await gateway.app.keys.refresh()
    assert.ok(secret)
    assert.equal((await get(`/networks/${chainId}/busyThreshold`, basic(key.key, secret))).status, 200)
    const wrongSecret = await get(`/networks/${chainId}/busyThreshold`, basic(key.key, 'nope'))
    assert.deepEqual(wrongSecret.json, { statusCode: 401, message: 'invalid project id or project secret' })

    assert.equal((await get(`/networks/${chainId}/baseFeePercentile`, basic(poor.key))).status, 200)
    const latest = gateway.app.meter.secondsToReset()
    const broke = await get(`/networks/${chainId}/baseFeePercentile`, basic(poor.key))
    const soonest = gateway.app.meter.secondsToReset()
    assert.equal(broke.status, 402)
    assert.deepEqual(broke.json, {
      statusCode: 402,
      message: 'Payment Required',
      event: -33000,
      details: 'You have reached your daily credit limit. The balance resets at 00:00 UTC.',
    })
    // until 00:00 UTC, as the meter counts it at some moment between the two readings around the call
    const retryAfter = Number(broke.headers.get('retry-after'))
    assert.ok(
      soonest <= retryAfter && retryAfter <= latest,
      `Retry-After ${retryAfter}: ${soonest}..${latest}`,
    )
    assert.equal(wrongSecret.headers.get('retry-after'), null)
  })

  it('a restart in the middle of a backfill does not fetch again what is stored', async () => {
    const proxy = await startFakeUpstream({ kind: 'proxy', target: node.url })
    const config = {
      gas: { enabled: true, chunkBlocks: 100 },
      upstreams: { headPollMs: 60_000 },
    }
    const second = await startTestGateway({ upstreams: [proxy.url], config })
    try {
      const stored = () => second.app.feeStore.storedNumbers(chainId, 0, head)
      await until(async () => (await stored()).length >= 400, '400 blocks stored before the restart', 60_000)
      let stoppedAt = 0
      await second.restart(() => {
        stoppedAt = proxy.requests.length
      })
      await waitForHead(second, head)

      const fetchedBlocks = (requests: typeof proxy.requests) =>
        requests
          .filter((request) => request.method === 'eth_feeHistory')
          .flatMap((request) => {
            const [count, newest] = request.params as [string, string]
            return Array.from(
              { length: Number(count) },
              (_, index) => Number(newest) - Number(count) + 1 + index,
            )
          })
      const before = fetchedBlocks(proxy.requests.slice(0, stoppedAt))
      const afterRestart = fetchedBlocks(proxy.requests.slice(stoppedAt))
      assert.ok(
        before.length >= 400 && before.length < head + 1,
        `${before.length} blocks fetched before the restart`,
      )
      const fetchedBefore = new Set(before)
      assert.deepEqual(
        afterRestart.filter((number) => fetchedBefore.has(number)),
        [],
        'nothing stored before the restart was fetched again',
      )
      assert.equal(before.length + afterRestart.length, head + 1, 'every block fetched exactly once')
      assert.equal(new Set([...before, ...afterRestart]).size, head + 1)
    } finally {
      await second.close()
      await proxy.close()
    }
  })

  it('a reorg replaces the affected entries and the answers follow', async () => {
    const rpc = async (method: string, params: unknown[] = []) =>
      ((await postJson(node.url, rpcBody(method, params))).json as { result: unknown }).result
    const snapshot = await rpc('evm_snapshot')
    // five full blocks on one branch: the base fee climbs
    for (let block = 0; block < 5; block++) {
      await rpc('evm_setAutomine', [false])
      for (let index = 0; index < 3; index++) {
        await rpc('eth_sendTransaction', [
          {
            from: node.fixtures.accounts[index + 3],
            to: node.fixtures.demo,
            data: `0x${'00'.repeat(4)}`,
            gas: '0x989680',
          },
        ])
      }
      await rpc('evm_mine')
      await rpc('evm_setAutomine', [true])
    }
    const branchHead = Number(await rpc('eth_blockNumber'))
    await waitForHead(gateway, branchHead)
    const onBranch = (await get(`/networks/${chainId}/baseFeeHistory`, basic(gateway.key))).json as string[]

    await rpc('evm_revert', [snapshot])
    await rpc('anvil_mine', ['0x7'])
    const newHead = Number(await rpc('eth_blockNumber'))
    assert.equal(newHead, head + 7)
    await waitForHead(gateway, newHead)

    const fees = await readNodeFees(node.url)
    const answer = (await get(`/networks/${chainId}/baseFeeHistory`, basic(gateway.key))).json as string[]
    assert.deepEqual(answer, expectedGasAnswers(fees).baseFeeHistory)
    assert.notDeepEqual(answer.slice(-7, -2), onBranch.slice(-5), 'the dropped branch is gone')
    const median = (await get(`/networks/${chainId}/baseFeePercentile`, basic(gateway.key))).json
    assert.deepEqual(median, expectedGasAnswers(fees).baseFeePercentile)
  })
})

describe('Gas REST API on a chain without base fees', () => {
  let fake: FakeUpstream
  let gateway: TestGateway
  before(async () => {
    fake = await startFakeUpstream({
      kind: 'json',
      respond: ({ method }) =>
        method === 'eth_getBlockByNumber'
          ? { number: '0x10', hash: `0x${'aa'.repeat(32)}`, gasLimit: '0x1c9c380' }
          : '0x1',
    })
    gateway = await startTestGateway({
      config: {
        networks: [{ name: 'classic', chainId: 61, upstreams: [{ url: fake.url }] }],
        gas: { enabled: true },
        upstreams: { headPollMs: 100 },
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await fake?.close()
  })

  it('answers 400 saying so', async () => {
    await gateway.app.indexers.get(61)?.tick()
    const response = await fetch(`${gateway.url}/v3/${gateway.key}/networks/61/suggestedGasFees`)
    assert.equal(response.status, 400)
    assert.deepEqual(await response.json(), {
      statusCode: 400,
      message: 'chain 61 has no base fees (pre-London): the gas API needs EIP-1559 blocks.',
    })
  })
})
