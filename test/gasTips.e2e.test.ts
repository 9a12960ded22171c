import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { formatGwei, parseGwei } from 'viem'
import { type Anvil, startAnvil } from '../src/devnet/startAnvil.ts'
import { expectedGasAnswers, readNodeFees } from './helpers/expectedGasAnswers.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { until } from './helpers/until.ts'

const chainId = 31337

type Level = { suggestedMaxPriorityFeePerGas: string; suggestedMaxFeePerGas: string }
type Fees = { low: Level; medium: Level; high: Level; latestPriorityFeeRange: string[] }

async function nodeRpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const answer = (await postJson(url, rpcBody(method, params))).json as { result?: T; error?: unknown }
  if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`)
  return answer.result as T
}

/** Mines empty blocks on the node itself and waits until the gateway's fee window has the new head. */
async function mineAndIndex(node: Anvil, gateway: TestGateway, blocks: number): Promise<number> {
  await nodeRpc(node.url, 'anvil_mine', [`0x${blocks.toString(16)}`])
  const head = Number(await nodeRpc<string>(node.url, 'eth_blockNumber'))
  const indexer = gateway.app.indexers.get(chainId)
  assert.ok(indexer)
  await until(() => indexer.window()?.head === head, `the fee indexer to reach block ${head}`)
  return head
}

async function suggestedFees(gateway: TestGateway): Promise<Fees> {
  const response = await fetch(`${gateway.url}/v3/${gateway.key}/networks/${chainId}/suggestedGasFees`)
  assert.equal(response.status, 200)
  return (await response.json()) as Fees
}

/** docs/compatibility.md §5 for one level, from its tip before the floor. */
function expectedLevel(tip: bigint, latestBaseFee: bigint, basePercent: bigint, floor: bigint) {
  const floored = latestBaseFee >= floor && tip < floor ? floor : tip
  return {
    suggestedMaxPriorityFeePerGas: formatGwei(floored),
    suggestedMaxFeePerGas: formatGwei((latestBaseFee * basePercent) / 100n + floored),
  }
}

const levelsOf = (fees: Fees) =>
  [fees.low, fees.medium, fees.high].map(({ suggestedMaxPriorityFeePerGas, suggestedMaxFeePerGas }) => ({
    suggestedMaxPriorityFeePerGas,
    suggestedMaxFeePerGas,
  }))

const latestBaseFee = async (node: Anvil) =>
  BigInt(
    (await nodeRpc<{ baseFeePerGas: string }>(node.url, 'eth_getBlockByNumber', ['latest', false]))
      .baseFeePerGas,
  )

describe('Gas API tips on a quiet chain (a fresh anvil, empty blocks)', () => {
  let node: Anvil
  let gateway: TestGateway

  before(async () => {
    node = await startAnvil()
    gateway = await startTestGateway({
      upstreams: [node.url],
      config: { gas: { enabled: true }, upstreams: { headPollMs: 50 } },
    })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  it('no block with transactions in the window: every tip is the node eth_maxPriorityFeePerGas, not 0', async () => {
    await mineAndIndex(node, gateway, 10)
    const nodeTip = BigInt(await nodeRpc<string>(node.url, 'eth_maxPriorityFeePerGas'))
    assert.ok(nodeTip > 0n, 'the node suggests a tip')
    const latest = await latestBaseFee(node)
    const fees = await suggestedFees(gateway)
    assert.deepEqual(levelsOf(fees), [
      expectedLevel(nodeTip, latest, 110n, parseGwei('1')),
      expectedLevel(nodeTip, latest, 120n, parseGwei('1.5')),
      expectedLevel(nodeTip, latest, 125n, parseGwei('2')),
    ])
    assert.deepEqual(fees.latestPriorityFeeRange, [formatGwei(nodeTip), formatGwei(nodeTip)])
    assert.deepEqual(fees, expectedGasAnswers(await readNodeFees(node.url)).suggestedGasFees)
  })

  it('one transaction, then empty blocks: the tips come from its block', async () => {
    const [from, to] = await nodeRpc<string[]>(node.url, 'eth_accounts')
    const tip = parseGwei('3')
    const hash = await nodeRpc<string>(node.url, 'eth_sendTransaction', [
      {
        from,
        to,
        value: '0x1',
        type: '0x2',
        maxPriorityFeePerGas: `0x${tip.toString(16)}`,
        maxFeePerGas: `0x${parseGwei('50').toString(16)}`,
      },
    ])
    // anvil answers the send before it mines the transaction: wait for the receipt
    type Receipt = { blockNumber: string; status: string }
    const receipts: (Receipt | null)[] = []
    await until(async () => {
      receipts.push(await nodeRpc<Receipt | null>(node.url, 'eth_getTransactionReceipt', [hash]))
      return receipts.at(-1) !== null
    }, 'the receipt')
    const receipt = receipts.at(-1) as Receipt
    assert.equal(receipt.status, '0x1')

    // the node's own account of that block: its one transaction pays the whole 3 Gwei at every
    // percentile (anvil can answer the receipt before its fee history has the block: waited for)
    let rewards: string[] = []
    await until(async () => {
      const history = await nodeRpc<{ reward?: string[][] }>(node.url, 'eth_feeHistory', [
        '0x1',
        receipt.blockNumber,
        [10, 20, 30],
      ])
      rewards = history.reward?.[0] ?? []
      return rewards.length > 0
    }, "the node's fee history of the block")
    const [p10, p20, p30] = rewards.map(BigInt) as [bigint, bigint, bigint]
    assert.deepEqual([p10, p20, p30], [tip, tip, tip])

    for (const emptyBlocks of [10, 300]) {
      // 300 more: the block is further back than the 200 blocks of the historical ranges
      const head = await mineAndIndex(node, gateway, emptyBlocks)
      assert.ok(head > Number(receipt.blockNumber) + 5, 'the block is not among the last 5')
      const latest = await latestBaseFee(node)
      const fees = await suggestedFees(gateway)
      // the last 5 blocks with transactions are just this one: the median is its own percentile
      assert.deepEqual(levelsOf(fees), [
        expectedLevel((p10 * 94n) / 100n, latest, 110n, parseGwei('1')),
        expectedLevel((p20 * 97n) / 100n, latest, 120n, parseGwei('1.5')),
        expectedLevel((p30 * 98n) / 100n, latest, 125n, parseGwei('2')),
      ])
      assert.deepEqual(fees.latestPriorityFeeRange, [formatGwei(tip), formatGwei(tip)])
      assert.deepEqual(fees, expectedGasAnswers(await readNodeFees(node.url)).suggestedGasFees)
    }
  })
})

describe('Gas API tips from a node without eth_maxPriorityFeePerGas', () => {
  let node: Anvil
  let proxy: FakeUpstream
  let gateway: TestGateway

  before(async () => {
    node = await startAnvil()
    // a real node cannot be made to lack the method: this proxy answers it with "method not found"
    const error = { code: -32601, message: 'the method eth_maxPriorityFeePerGas does not exist' }
    proxy = await startFakeUpstream({
      kind: 'forMethods',
      methods: ['eth_maxPriorityFeePerGas'],
      behaviour: { kind: 'rpcError', error },
      otherwise: node.url,
    })
    gateway = await startTestGateway({
      upstreams: [proxy.url],
      config: { gas: { enabled: true }, upstreams: { headPollMs: 50 } },
    })
  })
  after(async () => {
    await gateway?.close()
    await proxy?.close()
    await node?.stop()
  })

  it('suggests a tip of 0 and keeps indexing new heads', async () => {
    await mineAndIndex(node, gateway, 3)
    const fees = await suggestedFees(gateway)
    const latest = await latestBaseFee(node)
    assert.deepEqual(levelsOf(fees), [
      expectedLevel(0n, latest, 110n, parseGwei('1')),
      expectedLevel(0n, latest, 120n, parseGwei('1.5')),
      expectedLevel(0n, latest, 125n, parseGwei('2')),
    ])
    // the next head is indexed too: the failed call did not stop the indexer
    await mineAndIndex(node, gateway, 1)
    assert.equal(gateway.app.indexers.get(chainId)?.status(), 'ready')
  })
})
