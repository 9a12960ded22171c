import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { formatGwei } from 'viem'
import { feeHistoryFromBlocks } from '../src/gas/feeHistoryFromBlocks.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway, unlimitedKey } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const chainId = 31337

type NodeFees = { baseFees: bigint[]; tips: bigint[][]; ratios: number[]; next: bigint }

/**
 * The node's own fee data, read here independently of the gateway: base fees from the blocks, tips
 * at 0/10/20/30/100% from the node's eth_feeHistory, the next base fee from its pending entry.
 */
async function readNodeFees(url: string): Promise<NodeFees> {
  const rpc = async (body: unknown) => (await postJson(url, body)).json
  const head = Number(((await rpc(rpcBody('eth_blockNumber'))) as { result: string }).result)
  const baseFees: bigint[] = []
  for (let from = 0; from <= head; from += 500) {
    const batch = []
    for (let number = from; number <= Math.min(head, from + 499); number++) {
      batch.push(rpcBody('eth_getBlockByNumber', [`0x${number.toString(16)}`, false], number))
    }
    const blocks = (await rpc(batch)) as { id: number; result: { baseFeePerGas: string } }[]
    blocks.sort((a, b) => a.id - b.id)
    for (const block of blocks) baseFees.push(BigInt(block.result.baseFeePerGas))
  }
  const tips: bigint[][] = []
  const ratios: number[] = []
  let next = 0n
  for (let to = head; to >= 0; to -= 1024) {
    const count = Math.min(1024, to + 1)
    const history = (
      (await rpc(
        rpcBody('eth_feeHistory', [`0x${count.toString(16)}`, `0x${to.toString(16)}`, [0, 10, 20, 30, 100]]),
      )) as {
        result: { reward: string[][]; gasUsedRatio: number[]; baseFeePerGas: string[] }
      }
    ).result
    if (to === head) next = BigInt(history.baseFeePerGas[count] as string)
    tips.unshift(...history.reward.map((row) => row.map(BigInt)))
    ratios.unshift(...history.gasUsedRatio)
  }
  return { baseFees, tips, ratios, next }
}

/** COMPAT.md §5, written out again from its text. */
function expectedAnswers(fees: NodeFees) {
  const n = fees.baseFees.length
  const sorted = [...fees.baseFees].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const percentile = (p: number) => sorted[Math.max(0, Math.floor(n * p) - 1)] as bigint
  const latest = fees.baseFees[n - 1] as bigint
  const withTips = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, index) => from + index).filter(
      (index) => (fees.ratios[index] ?? 0) > 0,
    )
  const median = (values: bigint[]) => {
    const ordered = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    return ordered[Math.floor((ordered.length - 1) / 2)] ?? 0n
  }
  const lastFive = withTips(n - 5, n)
  const level = (column: number, tipPercent: bigint, basePercent: bigint, floor: bigint, maxWait: number) => {
    let tip = (median(lastFive.map((index) => fees.tips[index]?.[column] as bigint)) * tipPercent) / 100n
    if (latest >= floor && tip < floor) tip = floor
    return {
      suggestedMaxPriorityFeePerGas: formatGwei(tip),
      suggestedMaxFeePerGas: formatGwei((latest * basePercent) / 100n + tip),
      minWaitTimeEstimate: 15_000,
      maxWaitTimeEstimate: maxWait,
    }
  }
  const recent200 = withTips(n - 200, n)
  const last200BaseFees = fees.baseFees.slice(-200)
  const latestTips = (fees.ratios[n - 1] ?? 0) > 0 ? (fees.tips[n - 1] as bigint[]) : [0n, 0n, 0n, 0n, 0n]
  const trend = (now: bigint, before: bigint) => (now > before ? 'up' : now < before ? 'down' : 'level')
  const minOf = (values: bigint[]) => values.reduce((a, b) => (b < a ? b : a))
  const maxOf = (values: bigint[]) => values.reduce((a, b) => (b > a ? b : a))
  return {
    baseFeePercentile: { baseFeePercentile: formatGwei(percentile(0.5)) },
    busyThreshold: { busyThreshold: formatGwei(percentile(0.9)) },
    baseFeeHistory: fees.baseFees.slice(-500).map((fee) => formatGwei(fee)),
    suggestedGasFees: {
      low: level(1, 94n, 110n, 1_000_000_000n, 30_000),
      medium: level(2, 97n, 120n, 1_500_000_000n, 45_000),
      high: level(3, 98n, 125n, 2_000_000_000n, 60_000),
      estimatedBaseFee: formatGwei(fees.next),
      networkCongestion:
        Math.round((fees.baseFees.filter((fee) => fee <= latest).length / n) * 10_000) / 10_000,
      latestPriorityFeeRange: [formatGwei(latestTips[0] as bigint), formatGwei(latestTips[4] as bigint)],
      historicalPriorityFeeRange: [
        formatGwei(minOf(recent200.map((index) => fees.tips[index]?.[0] as bigint))),
        formatGwei(maxOf(recent200.map((index) => fees.tips[index]?.[4] as bigint))),
      ],
      historicalBaseFeeRange: [formatGwei(minOf(last200BaseFees)), formatGwei(maxOf(last200BaseFees))],
      priorityFeeTrend: trend(
        median(lastFive.map((index) => fees.tips[index]?.[2] as bigint)),
        median(withTips(n - 10, n - 5).map((index) => fees.tips[index]?.[2] as bigint)),
      ),
      baseFeeTrend: trend(fees.next, latest),
    },
  }
}

async function waitForHead(gateway: TestGateway, head: number): Promise<void> {
  const indexer = gateway.app.indexers.get(chainId)
  assert.ok(indexer)
  const deadline = Date.now() + 60_000
  while (indexer.window()?.head !== head || (indexer.window()?.blocks.length ?? 0) < head + 1) {
    if (Date.now() > deadline) throw new Error(`the indexer did not reach block ${head}`)
    await indexer.tick().catch(() => undefined)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
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
      config: { gas: { enabled: true, pollMs: 200 } },
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
    const expected = expectedAnswers(await readNodeFees(node.url))
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
    assert.equal(unknown.headers.get('x-credits-charged'), '5')

    const missing = await get(`/networks/${chainId}/baseFeePercentile`)
    assert.equal(missing.status, 401)
    assert.deepEqual(missing.json, { statusCode: 401, message: 'project id required in the url' })
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
    const broke = await get(`/networks/${chainId}/baseFeePercentile`, basic(poor.key))
    assert.equal(broke.status, 402)
    assert.deepEqual(broke.json, {
      statusCode: 402,
      message: 'Payment Required',
      event: -33000,
      details: 'You have reached your daily credit limit. The balance resets at 00:00 UTC.',
    })
  })

  it('a restart in the middle of a backfill does not fetch again what is stored', async () => {
    const proxy = await startFakeUpstream({ kind: 'proxy', target: node.url })
    const config = {
      gas: { enabled: true, chunkBlocks: 100, pollMs: 60_000 },
      upstreams: { headPollMs: 60_000 },
    }
    const second = await startTestGateway({ upstreams: [proxy.url], config })
    try {
      const stored = () => second.app.feeStore.storedNumbers(chainId, 0, head)
      while ((await stored()).length < 400) await new Promise((resolve) => setTimeout(resolve, 5))
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
    assert.deepEqual(answer, expectedAnswers(fees).baseFeeHistory)
    assert.notDeepEqual(answer.slice(-7, -2), onBranch.slice(-5), 'the dropped branch is gone')
    const median = (await get(`/networks/${chainId}/baseFeePercentile`, basic(gateway.key))).json
    assert.deepEqual(median, expectedAnswers(fees).baseFeePercentile)
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
        gas: { enabled: true, pollMs: 100 },
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
