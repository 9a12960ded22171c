import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { encodeAbiParameters, encodeFunctionData, keccak256, toHex } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import { type NodeImplementation, nodeImplementations } from './helpers/nodeImplementations.ts'
import { postJson } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { devnetOver, nodeRpc, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

type Call = { method: string; params: unknown[] }

const tags = ['latest', 'earliest', 'pending', 'safe', 'finalized'] as const
const unknownHash = `0x${'ab'.repeat(32)}`
const unknownAddress = `0x${'cd'.repeat(20)}`

/** One node of each implementation for the file: the suites below run on it in turn. */
for (const implementation of nodeImplementations) {
  describe(`differential on ${implementation.name}`, () => {
    let node: TestNode

    before(async () => {
      node = await implementation.start()
    })
    after(async () => {
      await node?.stop()
    })

    describeSameAnswers(implementation, () => node)
    describeCachedAnswers(implementation, () => node)

    it(`the node's safe and finalized are ${implementation.safeDepth} and ${implementation.finalizedDepth} blocks below latest`, async () => {
      const numberOf = async (tag: string) =>
        BigInt(((await nodeRpc(node, 'eth_getBlockByNumber', [tag, false])) as { number: string }).number)
      const latest = await numberOf('latest')
      assert.ok(latest > BigInt(implementation.finalizedDepth), `latest ${latest}`)
      assert.equal(latest - (await numberOf('safe')), BigInt(implementation.safeDepth))
      assert.equal(latest - (await numberOf('finalized')), BigInt(implementation.finalizedDepth))
    })
  })
}

/**
 * Every core method (docs/compatibility.md §2) with its parameter variants, sent to the gateway and to the node directly:
 * the answers must be identical. The docs/compatibility.md §7 duties (decimal and `pending` block receipts,
 * not-found errors turned null, the gas cap, input checks) have their own tests in duties.e2e.test.ts,
 * so this suite sends only what the node itself accepts and answers without an error of its own kind.
 */
function describeSameAnswers(implementation: NodeImplementation, getNode: () => TestNode): void {
  describe('gateway and node answer the same', () => {
    let node: TestNode
    let gateway: TestGateway
    let calls: Call[]

    before(async () => {
      node = getNode()
      gateway = await startTestGateway({ upstreams: [node.url] })
      calls = await buildCalls(node)
    })
    after(async () => {
      await gateway?.close()
    })

    async function both(body: unknown): Promise<[unknown, unknown]> {
      const [viaGateway, direct] = await Promise.all([
        postJson(gateway.endpoint, body),
        postJson(node.url, body),
      ])
      assert.equal(viaGateway.status, 200)
      return [viaGateway.json, direct.json]
    }

    /** The pending block carries the current time: a pair can straddle a second, so it gets three tries. */
    async function assertSame(body: unknown, label: string): Promise<void> {
      for (let attempt = 1; ; attempt++) {
        const [viaGateway, direct] = await both(body)
        try {
          assert.deepEqual(viaGateway, direct, label)
          return
        } catch (err) {
          if (attempt === 3 || !JSON.stringify(body).includes('pending')) throw err
        }
      }
    }

    it('single calls, every method and variant', async () => {
      assert.ok(calls.length > 150, `${calls.length} calls`)
      let id = 0
      for (const call of calls) {
        id++
        const body = { jsonrpc: '2.0', id: id % 2 ? id : `id-${id}`, ...call }
        await assertSame(body, `${call.method} ${JSON.stringify(call.params)}`)
      }
    })

    it('answers carry results of every kind (the variants are not all null)', async () => {
      const kinds = new Set<string>()
      for (const call of calls) {
        const { json } = await postJson(gateway.endpoint, { jsonrpc: '2.0', id: 1, ...call })
        const answer = json as { result?: unknown; error?: unknown }
        kinds.add(
          answer.error
            ? 'error'
            : answer.result === null
              ? 'null'
              : Array.isArray(answer.result)
                ? 'array'
                : typeof answer.result,
        )
      }
      assert.deepEqual([...kinds].sort(), ['array', 'error', 'null', 'object', 'string'])
    })

    it('one batch of every call', async () => {
      const batch = calls
        .filter((call) => !JSON.stringify(call.params).includes('pending'))
        .map((call, index) => ({ jsonrpc: '2.0', id: index, ...call }))
      await assertSame(batch, 'batch')
    })

    it(`eth_call with gas one past EIP-7825's cap: the node's answer (${implementation.txGasCapRefusal ? 'a refusal' : 'a result'})`, async () => {
      const body = {
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_call',
        params: [{ ...counterCall(node), gas: toHex(2 ** 24 + 1) }, 'latest'],
      }
      const [viaGateway, direct] = (await both(body)) as [{ error?: unknown; result?: unknown }, unknown]
      assert.deepEqual(viaGateway, direct)
      assert.deepEqual(viaGateway.error, implementation.txGasCapRefusal)
      if (!implementation.txGasCapRefusal)
        assert.equal(BigInt(viaGateway.result as string), node.fixtures.counterValue)
    })

    it('batches mixing good and bad calls: good ones identical, bad ones refused by the gateway', async () => {
      const good = calls.slice(0, 40).filter((call) => !JSON.stringify(call.params).includes('pending'))
      const bad: Call[] = [
        { method: 'eth_getBlockByNumber', params: ['0xzz', false] },
        { method: 'eth_getStorageAt', params: [unknownAddress, '0x0'] },
        { method: 'eth_getTransactionReceipt', params: ['0x1234'] },
      ]
      const mixed = [...good, ...bad]
        .map((call, index) => ({ jsonrpc: '2.0', id: index, ...call }))
        .sort((a, b) => ((a.id * 7919) % 43) - ((b.id * 7919) % 43))
      const [viaGateway, direct] = (await both(mixed)) as [{ id: number }[], { id: number }[]]
      assert.equal(viaGateway.length, mixed.length)
      const directById = new Map(direct.map((answer) => [answer.id, answer]))
      for (const answer of viaGateway) {
        const reference = directById.get(answer.id) ?? {}
        const call = bad[answer.id - good.length]
        if (call) {
          // the gateway checks params before any node is asked (docs/compatibility.md §7); a lenient node
          // answers what it can
          const nodeAccepts = implementation.acceptsMissingBlock && call.method === 'eth_getStorageAt'
          assert.ok('error' in answer, `bad call ${call.method}: the gateway refuses it`)
          assert.equal('error' in reference, !nodeAccepts, `bad call ${call.method}: the node's answer`)
        } else {
          assert.deepEqual(answer, reference)
        }
      }
    })
  })
}

function describeCachedAnswers(implementation: NodeImplementation, getNode: () => TestNode): void {
  describe('with the cache on: the same answers across new blocks and a reorg', () => {
    let node: TestNode
    let gateway: TestGateway
    let calls: Call[]

    const rpc = async (url: string, method: string, params: unknown[] = []) =>
      ((await postJson(url, { jsonrpc: '2.0', id: 1, method, params })).json as { result: never }).result

    before(async () => {
      node = getNode()
      // a finalized block above the fixtures (on a node that has one below latest): their blocks are kept
      // as immutable by number too
      await implementation.mine(node, 0x50)
      gateway = await startTestGateway({ config: { networks: devnetOver(node) } })
      calls = (await buildCalls(node)).filter((call) => !JSON.stringify(call.params).includes('pending'))
    })
    after(async () => {
      await gateway?.close()
    })

    /** Every call through the gateway and to the node; twice, so the second pass is served from the cache. */
    async function assertAllSame(label: string): Promise<void> {
      for (const pass of [1, 2]) {
        const batch = calls.map((call, index) => ({ jsonrpc: '2.0', id: index, ...call }))
        const [viaGateway, direct] = await Promise.all([
          postJson(gateway.endpoint, batch),
          postJson(node.url, batch),
        ])
        assert.deepEqual(viaGateway.json, direct.json, `${label}, pass ${pass}`)
        for (const [index, call] of calls.entries()) {
          const body = { jsonrpc: '2.0', id: `single-${index}`, ...call }
          const [one, reference] = await Promise.all([
            postJson(gateway.endpoint, body),
            postJson(node.url, body),
          ])
          assert.deepEqual(
            one.json,
            reference.json,
            `${label}, pass ${pass}: ${call.method} ${JSON.stringify(call.params)}`,
          )
        }
      }
    }

    /** The gateway has seen the node's head (the cache's head answers are dropped when it does). */
    async function untilGatewayAtHead(): Promise<void> {
      await until(async () => {
        const [mine, theirs] = await Promise.all([
          rpc(gateway.endpoint, 'eth_getBlockByNumber', ['latest', false]) as Promise<{ hash: string }>,
          rpc(node.url, 'eth_getBlockByNumber', ['latest', false]) as Promise<{ hash: string }>,
        ])
        return mine.hash === theirs.hash
      }, 'the gateway to see the new head')
    }

    it("answers are the node's, and repeated ones come from the cache", async () => {
      await assertAllSame('at start')
      const stats = gateway.app.networks.all[0]?.cache?.stats
      assert.ok(stats && stats.hits >= calls.length, `cache hits: ${stats?.hits}`)
    })

    /** Replaces the blocks of the next test with new ones (marked before they are mined). */
    let reorgNewBlocks: () => Promise<void>

    it('after new blocks: head answers follow the new head, immutable ones stay', async () => {
      const before = (await rpc(gateway.endpoint, 'eth_blockNumber')) as string
      reorgNewBlocks = await implementation.markFork(node)
      await implementation.mine(node, 3)
      await untilGatewayAtHead()
      // the new blocks by number too: the reorg replaces them, whatever the node calls finalized
      for (let block = BigInt(before) + 1n; block <= BigInt(before) + 3n; block++) {
        calls.push(
          { method: 'eth_getBlockByNumber', params: [toHex(block), false] },
          { method: 'eth_getBalance', params: [node.fixtures.accounts[0], toHex(block)] },
        )
      }
      assert.equal(BigInt(await rpc(gateway.endpoint, 'eth_blockNumber')), BigInt(before) + 3n)
      await assertAllSame('after 3 new blocks')
    })

    it("after a reorg of the last blocks: the new chain's answers, none of the dropped ones", async () => {
      const dropped = (await rpc(gateway.endpoint, 'eth_getBlockByNumber', ['latest', false])) as {
        hash: string
      }
      await reorgNewBlocks()
      await untilGatewayAtHead()
      const now = (await rpc(gateway.endpoint, 'eth_getBlockByNumber', ['latest', false])) as {
        hash: string
      }
      assert.notEqual(now.hash, dropped.hash)
      await assertAllSame('after a reorg')
    })
  })
}

/** `counter()` on the Demo contract. */
function counterCall(node: TestNode) {
  return { to: node.fixtures.demo, data: encodeFunctionData({ abi: demoAbi, functionName: 'counter' }) }
}

async function buildCalls(node: TestNode): Promise<Call[]> {
  const { fixtures } = node
  const rpc = async (method: string, params: unknown[]) =>
    ((await postJson(node.url, { jsonrpc: '2.0', id: 1, method, params })).json as { result: never }).result
  const receipts = await Promise.all(
    [fixtures.deployTx, fixtures.legacyTx, fixtures.accessListTx, fixtures.eip1559Tx, fixtures.failedTx].map(
      (hash) =>
        rpc('eth_getTransactionReceipt', [hash]) as Promise<{ blockNumber: string; blockHash: string }>,
    ),
  )
  const latest = (await rpc('eth_getBlockByNumber', ['latest', false])) as { number: string; hash: string }
  const loadBlock = toHex(fixtures.loadBlocks.to - 3n)
  const loadBlockHash = ((await rpc('eth_getBlockByNumber', [loadBlock, false])) as { hash: string }).hash
  const blockNumbers = [
    '0x0',
    ...receipts.map((receipt) => receipt.blockNumber),
    loadBlock,
    latest.number,
    '0xffffff',
  ]
  const blockHashes = [...receipts.map((receipt) => receipt.blockHash), loadBlockHash, latest.hash]
  const blockParams = [...tags, ...blockNumbers.slice(0, -1)]
  const mappingSlot = keccak256(
    encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [fixtures.mappingKey, 1n]),
  )
  const slots = ['0x0', '0x2', mappingSlot]
  const call = (functionName: 'counter' | 'failWithReason' | 'failWithCustomError' | 'increment') => ({
    from: fixtures.accounts[1],
    to: fixtures.demo,
    data: encodeFunctionData({ abi: demoAbi, functionName }),
  })

  const calls: Call[] = []
  const add = (method: string, ...variants: unknown[][]) => {
    for (const params of variants) calls.push({ method, params })
  }

  for (const block of blockParams) {
    for (const slot of slots) add('eth_getStorageAt', [fixtures.demo, slot, block])
  }
  add(
    'eth_getStorageAt',
    [unknownAddress, '0x0', 'latest'],
    [fixtures.demo, `0x${'0'.repeat(63)}1`, 'latest'],
  )
  for (const hash of [...blockHashes, unknownHash]) {
    for (const full of [false, true]) add('eth_getBlockByHash', [hash, full])
  }
  for (const block of [...tags, ...blockNumbers]) {
    for (const full of [false, true]) add('eth_getBlockByNumber', [block, full])
  }
  for (const hash of blockHashes.slice(0, 3))
    add('eth_getUncleByBlockHashAndIndex', [hash, '0x0'], [hash, '0x5'])
  for (const block of [...tags, ...blockNumbers]) {
    for (const index of ['0x0', '0x1', '0x63']) add('eth_getTransactionByBlockNumberAndIndex', [block, index])
  }
  for (const hash of [...blockHashes, unknownHash]) {
    for (const index of ['0x0', '0x1', '0x63']) add('eth_getTransactionByBlockHashAndIndex', [hash, index])
  }
  for (const hash of [
    fixtures.deployTx,
    fixtures.legacyTx,
    fixtures.accessListTx,
    fixtures.eip1559Tx,
    fixtures.failedTx,
    unknownHash,
  ]) {
    add('eth_getTransactionReceipt', [hash])
  }
  for (const block of [...tags.filter((tag) => tag !== 'pending'), ...blockNumbers, ...blockHashes]) {
    add('eth_getBlockReceipts', [block])
  }
  for (const block of blockParams.filter((block) => block !== '0x0')) {
    add('eth_call', [call('counter'), block])
  }
  add(
    'eth_call',
    [call('failWithReason'), 'latest'],
    [call('failWithCustomError'), 'latest'],
    [{ ...call('counter'), gas: '0x100000' }, 'latest'],
    [{ to: fixtures.demo, data: '0x' }, 'latest'],
    [call('counter'), { blockHash: latest.hash }],
  )
  for (const block of ['latest', 'pending', 'safe', receipts[4]?.blockNumber]) {
    add('eth_createAccessList', [call('increment'), block])
  }
  for (const block of ['latest', 'earliest', 'safe', 'finalized', ...blockNumbers.slice(1, 3)]) {
    add('eth_getProof', [fixtures.demo, [`0x${'0'.repeat(64)}`, mappingSlot], block])
  }
  add('eth_getProof', [unknownAddress, [], 'latest'], [fixtures.demo, [], 'latest'])

  // the other standard reads
  add('eth_chainId', [])
  add('net_version', [])
  add('eth_blockNumber', [])
  add('eth_gasPrice', [])
  add(
    'eth_getBalance',
    [fixtures.accounts[1], 'latest'],
    [fixtures.demo, '0x1'],
    [unknownAddress, 'earliest'],
  )
  add('eth_getCode', [fixtures.demo, 'latest'], [fixtures.demo, '0x0'])
  add('eth_getTransactionCount', [fixtures.accounts[1], 'latest'])
  add('eth_getTransactionByHash', [fixtures.eip1559Tx], [unknownHash])
  add('eth_getBlockTransactionCountByNumber', [receipts[1]?.blockNumber], ['latest'])
  add('eth_getBlockTransactionCountByHash', [receipts[1]?.blockHash])
  add('eth_feeHistory', ['0x5', 'latest', [10, 50, 90]], [4, loadBlock, []])
  add('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: fixtures.demo }])
  add(
    'eth_getLogs',
    [{ blockHash: receipts[1]?.blockHash }],
    [{ fromBlock: '0x1', toBlock: '0x3', topics: [null] }],
  )
  add('eth_estimateGas', [call('increment')], [call('increment'), 'latest'])
  add('web3_clientVersion', [])
  add('web3_sha3', ['0x68656c6c6f'])
  return calls
}
