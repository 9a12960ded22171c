import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { encodeFunctionData } from 'viem'
import WebSocket from 'ws'
import { demoAbi } from '../src/devnet/contracts.ts'
import { expectedGasAnswers, readNodeFees } from './helpers/expectedGasAnswers.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { readMetrics } from './helpers/readMetrics.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

type Block = { number: string; hash: string; parentHash: string; transactions: string[] }
type Log = {
  blockHash: string
  blockNumber: string
  transactionHash: string
  logIndex: string
  removed: boolean
}
type Call = [method: string, params: unknown[]]

const chainId = 31337
const increment = encodeFunctionData({ abi: demoAbi, functionName: 'increment' })
const counter = encodeFunctionData({ abi: demoAbi, functionName: 'counter' })
const hex = (number: number) => `0x${number.toString(16)}`

/** A WebSocket client of the gateway with one subscription; every notification it got, in order. */
async function subscribe(url: string, params: unknown[]) {
  const socket = new WebSocket(url)
  const received: unknown[] = []
  let id: unknown
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString())
    if (message.id === 1) id = message.result
    else if (message.params?.subscription === id) received.push(message.params.result)
  })
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  socket.send(JSON.stringify(rpcBody('eth_subscribe', params, 1)))
  await until(() => id !== undefined, 'the subscription id')
  return { socket, received }
}

/**
 * The gateway in front of one anvil that has 300 blocks before the gateway starts (so reorgs fork
 * below the head it started at), its newHeads and logs subscribers, and its Gas API.
 */
describe('chain truth: what the gateway answers after reorgs, rewinds and reverts of a real anvil', () => {
  let node: TestNode
  let gateway: TestGateway
  /** A second gateway in front of the same node, without its WebSocket: it hears of heads by polling. */
  let polling: TestGateway
  let heads: Awaited<ReturnType<typeof subscribe>>
  let logs: Awaited<ReturnType<typeof subscribe>>

  const rpc = (method: string, params: unknown[] = []) => nodeRpc(node, method, params)
  const viaGateway = async (method: string, params: unknown[], through = gateway) =>
    (await postJson(through.endpoint, rpcBody(method, params))).json as { result?: unknown; error?: unknown }
  const viaNode = async (method: string, params: unknown[]) =>
    (await postJson(node.url, rpcBody(method, params))).json as { result?: unknown; error?: unknown }
  const block = async (ref: string) => (await rpc('eth_getBlockByNumber', [ref, false])) as Block
  const headNumber = async () => Number(await rpc('eth_blockNumber'))

  /** The calls a client makes around blocks from..to: by number, by hash, tags, receipts, logs, state. */
  function callsAround(from: number, to: number, hashes: string[], transactions: string[]): Call[] {
    const calls: Call[] = [
      ['eth_blockNumber', []],
      ['eth_getBlockByNumber', ['latest', false]],
      ['eth_getBlockByNumber', ['safe', false]],
      ['eth_getBlockByNumber', ['finalized', false]],
      ['eth_getLogs', [{ fromBlock: hex(from), toBlock: hex(to), address: node.fixtures.demo }]],
      ['eth_call', [{ to: node.fixtures.demo, data: counter }, 'latest']],
      ['eth_getBalance', [node.fixtures.accounts[2], 'latest']],
    ]
    for (let number = from; number <= to; number++) {
      calls.push(['eth_getBlockByNumber', [hex(number), false]])
      calls.push(['eth_call', [{ to: node.fixtures.demo, data: counter }, hex(number)]])
    }
    for (const hash of hashes) {
      calls.push(['eth_getBlockByHash', [hash, false]])
      calls.push(['eth_getLogs', [{ blockHash: hash }]])
    }
    for (const hash of transactions) calls.push(['eth_getTransactionReceipt', [hash]])
    return calls
  }

  /** Asks the gateway each call (so its cache holds what it may keep). */
  async function warm(calls: Call[], through = gateway): Promise<void> {
    for (const [method, params] of calls) await viaGateway(method, params, through)
  }

  /**
   * Until the gateway answers each call as the node does, compared call by call, within 10 s: its head
   * polls come every 200 ms (and a comparison round of a deep reorg's calls takes seconds itself).
   */
  async function untilSameAsNode(calls: Call[], what: string, through = gateway): Promise<void> {
    let differing: unknown[] | undefined
    const same = async () => {
      for (const [method, params] of calls) {
        const [own, theirs] = await Promise.all([
          viaNode(method, params),
          viaGateway(method, params, through),
        ])
        if (JSON.stringify(own) !== JSON.stringify(theirs)) {
          differing = [method, params, own, theirs]
          return false
        }
      }
      return true
    }
    await until(same, what, 10_000).catch(() => {
      throw new Error(
        `${what}: the gateway still answers ${JSON.stringify(differing)} otherwise than the node`,
      )
    })
  }

  /**
   * `count` blocks, every other one with an increment (a log) sent by dev account `account` (another
   * account gives another branch); the blocks' and transactions' hashes.
   */
  async function mineWithLogs(
    count: number,
    account = 2,
  ): Promise<{ hashes: string[]; transactions: string[] }> {
    const hashes: string[] = []
    const transactions: string[] = []
    for (let index = 0; index < count; index++) {
      if (index % 2 === 0) {
        const hash = await rpc('eth_sendTransaction', [
          { from: node.fixtures.accounts[account], to: node.fixtures.demo, data: increment },
        ])
        await until(async () => (await rpc('eth_getTransactionReceipt', [hash])) !== null, 'the receipt')
        transactions.push(hash as string)
      } else await rpc('anvil_mine', ['0x1'])
      hashes.push((await block('latest')).hash)
    }
    return { hashes, transactions }
  }

  /** The node's blocks from..to, oldest first. */
  async function branch(from: number, to: number): Promise<Block[]> {
    const blocks: Block[] = []
    for (let number = from; number <= to; number++) blocks.push(await block(hex(number)))
    return blocks
  }

  /** Until newHeads announced each block of `blocks`, after the first `skip` notifications, in order. */
  async function untilAnnounced(blocks: Block[], skip: number): Promise<void> {
    const wanted = blocks.map((each) => each.hash)
    await until(() => heads.received.length >= skip + wanted.length, 'newHeads to announce the new branch')
    const announced = heads.received.slice(skip, skip + wanted.length).map((each) => (each as Block).hash)
    assert.deepEqual(announced, wanted)
  }

  /** A reorg of `depth` blocks with an increment in its second new block, checked end to end. */
  async function checkReorg(depth: number): Promise<void> {
    const mined = await mineWithLogs(4)
    await until(() => heads.received.some((each) => (each as Block).hash === mined.hashes.at(-1)), 'heads')
    const head = await headNumber()
    const from = head - depth + 1
    const dropped = await branch(from, head)
    const deliveredLogs = logs.received.filter((each) =>
      dropped.some((dropped) => dropped.hash === (each as Log).blockHash),
    ) as Log[]
    const before = callsAround(
      Math.max(0, from - 2),
      head,
      [...dropped.map((each) => each.hash)],
      mined.transactions,
    )
    await warm(before)
    const announcedBefore = heads.received.length
    const logsBefore = logs.received.length

    await rpc('anvil_reorg', [
      depth,
      [
        [
          { from: node.fixtures.accounts[3], to: node.fixtures.demo, data: increment },
          Math.min(1, depth - 1),
        ],
      ],
    ])
    const newBranch = await branch(from, head)
    assert.notEqual(newBranch[0]?.hash, dropped[0]?.hash)

    await untilSameAsNode(
      callsAround(
        Math.max(0, from - 2),
        head,
        [...dropped.map((each) => each.hash), ...newBranch.map((each) => each.hash)],
        mined.transactions,
      ),
      `a reorg ${depth} deep`,
    )
    await untilAnnounced(newBranch, announcedBefore)

    // logs: removed: true for each delivered from a dropped block, then the new branch's
    const newLogs = (await rpc('eth_getLogs', [
      { fromBlock: hex(from), toBlock: hex(head), address: node.fixtures.demo },
    ])) as Log[]
    assert.ok(newLogs.length > 0, 'the new branch has a log')
    await until(
      () => logs.received.length >= logsBefore + deliveredLogs.length + newLogs.length,
      'the logs subscription to hear of the reorg',
    )
    const after = logs.received.slice(logsBefore) as Log[]
    // dropped blocks newest first, each block's logs in their order
    const removed = deliveredLogs.map((each) => ({ ...each, removed: true })).sort(newestBlockFirst)
    assert.deepEqual(after.slice(0, deliveredLogs.length), removed)
    assert.deepEqual(after.slice(deliveredLogs.length, deliveredLogs.length + newLogs.length), newLogs)
  }

  before(async () => {
    node = await startTestNode({ loadBlocks: 300 })
    gateway = await startTestGateway({
      config: {
        networks: [{ name: 'devnet', chainId, upstreams: [{ url: node.url, ws: node.wsUrl }] }],
        upstreams: { headPollMs: 200 },
        gas: { enabled: true },
      },
    })
    polling = await startTestGateway({ upstreams: [node.url], config: { upstreams: { headPollMs: 200 } } })
    const wsUrl = `${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`
    heads = await subscribe(wsUrl, ['newHeads'])
    logs = await subscribe(wsUrl, ['logs', { address: node.fixtures.demo }])
  })
  after(async () => {
    heads?.socket.close()
    logs?.socket.close()
    await gateway?.close()
    await polling?.close()
    await node?.stop()
  })

  it('a reorg 10 deep just after the start, below the head the gateway started at', async () => {
    await checkReorg(10)
  })

  it('a reorg 1 deep', async () => {
    await checkReorg(1)
  })

  it('a reorg 150 deep, past finality', async () => {
    await checkReorg(150)
  })

  it('a rollback with no new block: nothing above the new head is served', async () => {
    const mined = await mineWithLogs(3)
    const head = await headNumber()
    const calls = callsAround(head - 4, head, mined.hashes, mined.transactions)
    await warm(calls)
    // the polling gateway at the head first: blocks it never took in, gone without others in their
    // place, are not seen (docs/compatibility.md §8, a rewind)
    await until(
      async () => Number((await viaGateway('eth_blockNumber', [], polling)).result) === head,
      'the polling gateway at the head',
    )
    await warm(calls, polling)
    await rpc('anvil_rollback', [3])
    assert.equal(await headNumber(), head - 3)
    await untilSameAsNode(calls, 'a rollback of 3')
    await untilSameAsNode(calls, 'a rollback of 3, without the WebSocket', polling)
  })

  it('a revert of 150 blocks, then 5 new: the shorter chain is the answer, the Gas API follows', async () => {
    const snapshot = await rpc('evm_snapshot')
    const start = await headNumber()
    const mined = await mineWithLogs(4)
    await rpc('anvil_mine', [hex(146)])
    const head = await headNumber()
    await until(
      async () => Number((await viaGateway('eth_blockNumber', [])).result) === head,
      'the gateway at the head',
    )
    const calls = callsAround(start - 2, start + 8, mined.hashes, mined.transactions)
    await warm(calls)
    await warm(calls, polling)

    await rpc('evm_revert', [snapshot])
    await mineWithLogs(5, 4)
    assert.equal(await headNumber(), start + 5)
    await untilSameAsNode(calls, 'a revert of 150, then 5 blocks')
    await untilSameAsNode(calls, 'a revert of 150, then 5 blocks, without the WebSocket', polling)

    const indexer = gateway.app.indexers.get(chainId)
    assert.ok(indexer)
    await until(() => indexer.window()?.head === start + 5, 'the fee indexer at the new head')
    const expected = expectedGasAnswers(await readNodeFees(node.url)).baseFeeHistory
    const answer = await fetch(`${gateway.url}/v3/${gateway.key}/networks/${chainId}/baseFeeHistory`)
    assert.deepEqual(await answer.json(), expected)
  })

  it("a snapshot and revert across finalized: blocks the node called final are the new chain's", async () => {
    const snapshot = await rpc('evm_snapshot')
    const start = await headNumber()
    await mineWithLogs(4)
    await rpc('anvil_mine', [hex(100)])
    const finalized = Number((await block('finalized')).number)
    assert.ok(finalized > start + 4, 'the first new blocks are final')
    await until(
      async () => Number((await viaGateway('eth_blockNumber', [])).result) === (await headNumber()),
      'the gateway at the head',
    )
    const network = gateway.app.networks.all[0]
    assert.ok(network)
    // the gateway knows them final too: it keeps their answers as immutable
    await until(
      () => (network.head.finalized() ?? 0n) >= BigInt(start + 5),
      'the gateway to know the new finalized block',
    )
    const calls = callsAround(start + 1, start + 5, [], [])
    await warm(calls)
    const { stats } = network.heads
    const violations = stats.pastFinality

    await rpc('evm_revert', [snapshot])
    await rpc('anvil_mine', [hex(110), hex(1)])
    await untilSameAsNode(calls, 'a revert across finalized')
    assert.ok(stats.pastFinality > violations, 'the change below finalized was recognised')
    const forks = (await readMetrics(gateway.url)).value('tollgate_chain_forks_total', {
      network: 'devnet',
      past_finality: 'true',
    })
    assert.ok((forks ?? 0) >= 1, `tollgate_chain_forks_total past finality: ${forks}`)
  })
})

function newestBlockFirst(a: Log, b: Log): number {
  return Number(b.blockNumber) - Number(a.blockNumber) || Number(a.logIndex) - Number(b.logIndex)
}
