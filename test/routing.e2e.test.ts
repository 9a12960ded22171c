import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { encodeDeployData, encodeFunctionData, getContractAddress, type Hex } from 'viem'
import { demoAbi, demoBytecode } from '../src/devnet/contracts.ts'
import { type Anvil, startAnvil } from '../src/devnet/startAnvil.ts'
import type { PoolMember } from '../src/upstreams/PoolMember.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { until } from './helpers/until.ts'

/** The chain's genesis time: every node of a test starts at it, and block N is mined at N × 12 s after. */
const genesisSeconds = 1_700_000_000

/** One JSON-RPC call to a node (or the gateway), its whole answer. */
async function rpc(
  url: string,
  method: string,
  params: unknown[] = [],
): Promise<{ result?: unknown; error?: unknown }> {
  return (await postJson(url, rpcBody(method, params))).json as { result?: unknown; error?: unknown }
}

async function result<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const answer = await rpc(url, method, params)
  assert.ok('result' in answer, `${method} answered ${JSON.stringify(answer)}`)
  return answer.result as T
}

const hex = (number: number | bigint) => `0x${number.toString(16)}`

/** An anvil that mines only when told: its blocks are what mineChain makes them. */
function startChainNode(extraArgs: string[] = []): Promise<Anvil> {
  return startAnvil({ extraArgs: ['--timestamp', String(genesisSeconds), '--no-mining', ...extraArgs] })
}

/**
 * Mines blocks `from`..`to` of one deterministic chain: block 1 deploys the Demo contract, every
 * later one calls its increment(), and every block holds a transfer of N wei, each from the same
 * dev account with its nonce and fees spelled out, at genesis + N × 12 s. Two nodes given the same
 * blocks have the same chain, hash for hash.
 */
async function mineChain(node: Anvil, from: number, to: number): Promise<void> {
  const [deployer, sender, receiver] = await result<Hex[]>(node.url, 'eth_accounts')
  const fees = { maxFeePerGas: hex(10_000_000_000), maxPriorityFeePerGas: hex(1_000_000_000) }
  const demo = getContractAddress({ from: deployer as Hex, nonce: 0n })
  for (let number = from; number <= to; number++) {
    const data =
      number === 1
        ? encodeDeployData({ abi: demoAbi, bytecode: demoBytecode, args: [7n] })
        : encodeFunctionData({ abi: demoAbi, functionName: 'increment' })
    await result(node.url, 'eth_sendTransaction', [
      {
        from: deployer,
        ...(number === 1 ? {} : { to: demo }),
        data,
        gas: hex(1_000_000),
        nonce: hex(number - 1),
        ...fees,
      },
    ])
    await result(node.url, 'eth_sendTransaction', [
      { from: sender, to: receiver, value: hex(number), gas: hex(21_000), nonce: hex(number - 1), ...fees },
    ])
    await result(node.url, 'evm_mine', [genesisSeconds + number * 12])
  }
}

type Recorded = { method: string; params: unknown[] }

/** An HTTP proxy in front of a node that records every JSON-RPC call it passes on. */
async function startRecordingProxy(
  target: string,
): Promise<{ url: string; calls: Recorded[]; close(): Promise<void> }> {
  const calls: Recorded[] = []
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', async () => {
      const body = Buffer.concat(chunks).toString()
      const parsed = JSON.parse(body) as Recorded | Recorded[]
      for (const call of Array.isArray(parsed) ? parsed : [parsed])
        calls.push({ method: call.method, params: call.params })
      const answer = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
      response.writeHead(answer.status, { 'content-type': 'application/json' })
      response.end(await answer.text())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const stateMethods = new Set([
  'eth_getBalance',
  'eth_call',
  'eth_getCode',
  'eth_getStorageAt',
  'eth_getTransactionCount',
])

/** The calls on state at a block below `below` that reached a node, the prober's own (on the zero address) left out. */
function oldStateCalls(calls: Recorded[], below: bigint): Recorded[] {
  return calls.filter(({ method, params }) => {
    if (!stateMethods.has(method)) return false
    if (params[0] === `0x${'0'.repeat(40)}`) return false
    const block = params[params.length - 1]
    return typeof block === 'string' && block.startsWith('0x') && block.length < 66 && BigInt(block) < below
  })
}

const counterCall = (to: Hex) => ({ to, data: encodeFunctionData({ abi: demoAbi, functionName: 'counter' }) })

describe('routing by what each upstream has, on real anvils', () => {
  describe('a pruned anvil listed first, an archive anvil of the same chain', () => {
    const blocks = 40
    let pruned: Anvil
    let archive: Anvil
    let proxy: Awaited<ReturnType<typeof startRecordingProxy>>
    let accounts: Hex[]
    let demo: Hex

    before(async () => {
      // the pruned node keeps the state of its last 10 blocks, and their transactions, receipts and
      // logs: of older blocks, only the headers
      ;[pruned, archive] = await Promise.all([
        startChainNode(['--prune-history', '10', '--transaction-block-keeper', '10']),
        startChainNode(),
      ])
      await Promise.all([mineChain(pruned, 1, blocks), mineChain(archive, 1, blocks)])
      proxy = await startRecordingProxy(pruned.url)
      accounts = await result<Hex[]>(archive.url, 'eth_accounts')
      demo = getContractAddress({ from: accounts[0] as Hex, nonce: 0n })
    })
    after(async () => {
      await proxy?.close()
      await Promise.all([pruned?.stop(), archive?.stop()])
    })

    it('the two nodes have one chain, hash for hash, and the pruned one refuses old state', async () => {
      for (const number of [1, 5, blocks]) {
        const [a, b] = await Promise.all(
          [pruned, archive].map((node) =>
            result<{ hash: string }>(node.url, 'eth_getBlockByNumber', [hex(number), false]),
          ),
        )
        assert.equal(a?.hash, b?.hash, `block ${number}`)
      }
      const refused = await rpc(pruned.url, 'eth_getBalance', [accounts[2], '0x5'])
      assert.match(JSON.stringify(refused.error), /BlockOutOfRangeError/)
    })

    it('probed at start: logs, fee history, blocks and receipts below its window are the archive node answers', async () => {
      const gateway = await startTestGateway({
        upstreams: [proxy.url, archive.url],
        config: { cache: { enabled: false }, upstreams: { historyProbeMs: 60_000 } },
      })
      try {
        const member = gateway.app.networks.all[0]?.pool.members[0] as PoolMember
        await until(() => member.earliestBlock !== undefined, 'the probe of the pruned node')
        const earliest = member.earliestBlock as bigint
        assert.ok(earliest > 2n && earliest <= BigInt(blocks), String(earliest))
        // the pruned node's own answer below its window leaves out what it dropped
        const wholeRange = [{ fromBlock: '0x2', toBlock: hex(blocks) }]
        const [own, archived] = await Promise.all(
          [pruned, archive].map((node) => result<unknown[]>(node.url, 'eth_getLogs', wholeRange)),
        )
        assert.ok((own?.length ?? 0) < (archived?.length ?? 0), `${own?.length} of ${archived?.length} logs`)

        const asked = proxy.calls.length
        const cases: [string, unknown[]][] = [
          ['eth_getLogs', wholeRange],
          ['eth_getLogs', [{ fromBlock: '0x2' }]],
          ['eth_getLogs', [{ fromBlock: 'earliest', toBlock: hex(earliest) }]],
          ['eth_getLogs', [{ fromBlock: hex(earliest - 1n), toBlock: hex(earliest) }]],
          ['eth_getLogs', [{ address: demo, fromBlock: '0x1', toBlock: 'latest' }]],
          ['eth_feeHistory', [hex(blocks - 2), hex(blocks), [25, 75]]],
          ['eth_feeHistory', ['0x5', hex(earliest + 1n), [50]]],
          ['eth_getBlockByNumber', ['0x2', true]],
          ['eth_getBlockReceipts', ['0x2']],
        ]
        for (const [method, params] of cases) {
          const answer = await rpc(gateway.endpoint, method, params)
          const expected = await rpc(archive.url, method, params)
          const what = `${method} ${JSON.stringify(params)}`
          assert.ok(expected.result !== undefined && expected.result !== null, what)
          if (Array.isArray(expected.result)) assert.ok(expected.result.length > 0, what)
          assert.deepEqual(answer, expected, what)
        }
        // none of them reached the pruned node (the head tracker's and the prober's calls aside)
        const reached = proxy.calls
          .slice(asked)
          .filter(
            ({ method, params }) =>
              method === 'eth_getLogs' ||
              method === 'eth_feeHistory' ||
              method === 'eth_getBlockReceipts' ||
              (method === 'eth_getBlockByNumber' && params[1] === true),
          )
        assert.deepEqual(reached, [])
        // logs in its window go to it, first in config order
        const inWindow = [{ fromBlock: hex(earliest), toBlock: hex(blocks) }]
        const before = proxy.calls.length
        assert.deepEqual(
          await rpc(gateway.endpoint, 'eth_getLogs', inWindow),
          await rpc(archive.url, 'eth_getLogs', inWindow),
        )
        assert.equal(proxy.calls.slice(before).filter(({ method }) => method === 'eth_getLogs').length, 1)
      } finally {
        await gateway.close()
      }
    })

    it('a slow node: serving starts without waiting for its history probe, which goes on', async () => {
      // each state probe of the pruned node answered late (but within a request's timeout): its
      // binary search over 40 blocks takes several times the start's bound (timeoutMs, 2 s)
      const slow = await startFakeUpstream({
        kind: 'rewrite',
        target: pruned.url,
        respond: async ({ method, params }) => {
          if (method === 'eth_getBalance' && params[0] === `0x${'0'.repeat(40)}`) {
            await new Promise((resolve) => setTimeout(resolve, 700))
          }
          return undefined
        },
      })
      const gateway = await startTestGateway({
        upstreams: [slow.url, archive.url],
        config: { cache: { enabled: false }, upstreams: { historyProbeMs: 60_000, timeoutMs: 2_000 } },
      })
      try {
        const members = gateway.app.networks.all[0]?.pool.members as PoolMember[]
        const [member, other] = members as [PoolMember, PoolMember]
        assert.equal(member.earliestState, undefined, 'still probing when the gateway serves')
        assert.equal(other.earliestState, 0n, 'the archive node, probed in one request')
        assert.deepEqual(
          await rpc(gateway.endpoint, 'eth_getBalance', [accounts[2], '0x5']),
          await rpc(archive.url, 'eth_getBalance', [accounts[2], '0x5']),
        )
        await until(() => member.earliestState !== undefined, 'the probe to finish in the background')
        assert.ok((member.earliestState ?? 0n) > 5n, String(member.earliestState))
      } finally {
        await gateway.close()
        await slow.close()
      }
    })

    for (const probing of [false, true]) {
      it(
        probing
          ? 'probed at start: old-state calls never reach the pruned node, new-state calls still go to it first'
          : 'not probed on a timer: one refusal, then the pruned node is probed and not asked for old state again',
        async () => {
          const gateway = await startTestGateway({
            upstreams: [proxy.url, archive.url],
            config: { cache: { enabled: false }, upstreams: { historyProbeMs: probing ? 60_000 : 0 } },
          })
          try {
            const member = gateway.app.networks.all[0]?.pool.members[0] as PoolMember
            const from = proxy.calls.length
            if (probing) await until(() => member.earliestState !== undefined, 'the probe of the pruned node')
            else {
              // the first old-state call: the pruned node refuses it, the archive node answers
              const first = await rpc(gateway.endpoint, 'eth_getBalance', [accounts[2], '0x5'])
              assert.deepEqual(first, await rpc(archive.url, 'eth_getBalance', [accounts[2], '0x5']))
              assert.equal(oldStateCalls(proxy.calls.slice(from), BigInt(blocks)).length, 1)
              await until(() => (member.earliestState ?? 0n) > 6n, 'the probe after the refusal')
            }
            // what the pool knows of the pruned node is what the node says: state there, none just below
            const earliest = member.earliestState as bigint
            assert.ok(earliest > 5n && earliest <= BigInt(blocks), String(earliest))
            assert.equal(
              typeof (await rpc(pruned.url, 'eth_getBalance', [accounts[2], hex(earliest)])).result,
              'string',
            )
            assert.match(
              JSON.stringify(
                (await rpc(pruned.url, 'eth_getBalance', [accounts[2], hex(earliest - 1n)])).error,
              ),
              /BlockOutOfRangeError/,
            )

            const asked = proxy.calls.length
            for (let number = 2; number < Number(earliest); number++) {
              for (const [method, params] of [
                ['eth_getBalance', [accounts[2], hex(number)]],
                ['eth_call', [counterCall(demo), hex(number)]],
                ['eth_getTransactionCount', [accounts[1], hex(number)]],
                ['eth_getStorageAt', [demo, '0x0', hex(number)]],
              ] as const) {
                const answer = await rpc(gateway.endpoint, method, [...params])
                assert.deepEqual(
                  answer,
                  await rpc(archive.url, method, [...params]),
                  `${method} at ${number}`,
                )
                assert.ok(answer.result !== undefined, `${method} at ${number}: ${JSON.stringify(answer)}`)
              }
            }
            assert.deepEqual(oldStateCalls(proxy.calls.slice(asked), earliest), [])

            // state it keeps (the latest, and a block in its window): the pruned node, first in config order
            for (const block of ['latest', hex(earliest)]) {
              const before = proxy.calls.length
              const answer = await rpc(gateway.endpoint, 'eth_call', [counterCall(demo), block])
              assert.deepEqual(answer, await rpc(archive.url, 'eth_call', [counterCall(demo), block]))
              const calls = proxy.calls.slice(before).filter((call) => call.method === 'eth_call')
              assert.equal(calls.length, 1, block)
            }
          } finally {
            await gateway.close()
          }
        },
      )
    }
  })

  describe('a lagging anvil of the same chain listed first', () => {
    const blocks = 100
    const laggingBlocks = 30
    let lagging: Anvil
    let synced: Anvil
    let proxy: Awaited<ReturnType<typeof startRecordingProxy>>
    let gateway: TestGateway
    let finalized: { number: string; hash: string }

    before(async () => {
      ;[lagging, synced] = await Promise.all([startChainNode(), startChainNode()])
      await Promise.all([mineChain(lagging, 1, laggingBlocks), mineChain(synced, 1, blocks)])
      proxy = await startRecordingProxy(lagging.url)
      finalized = await result(synced.url, 'eth_getBlockByNumber', ['finalized', false])
      gateway = await startTestGateway({
        upstreams: [proxy.url, synced.url],
        config: { cache: { enabled: false } },
      })
      const network = gateway.app.networks.all[0]
      await until(
        () => network?.head.finalized() === BigInt(finalized.number),
        "the network's finalized block",
      )
    })
    after(async () => {
      await gateway?.close()
      await proxy?.close()
      await Promise.all([lagging?.stop(), synced?.stop()])
    })

    it('the two nodes share the blocks the lagging one has; the finalized block is above its head', async () => {
      const [a, b] = await Promise.all(
        [lagging, synced].map((node) =>
          result<{ hash: string }>(node.url, 'eth_getBlockByNumber', [hex(laggingBlocks), false]),
        ),
      )
      assert.equal(a?.hash, b?.hash)
      assert.ok(a?.hash)
      assert.ok(BigInt(finalized.number) > BigInt(laggingBlocks))
      assert.equal((await rpc(lagging.url, 'eth_getBlockByHash', [finalized.hash, false])).result, null)
    })

    it('calls for blocks above its head get the in-sync node answer, by number, by hash and by tag', async () => {
      const number = finalized.number
      const cases: [string, unknown[]][] = [
        ['eth_getBlockByNumber', [number, false]],
        ['eth_getBlockByNumber', [number, true]],
        ['eth_getBlockByHash', [finalized.hash, false]],
        ['eth_getBlockByHash', [finalized.hash, true]],
        ['eth_getBlockByNumber', ['finalized', false]],
        ['eth_getBlockByNumber', ['safe', false]],
        ['eth_getBlockByNumber', [hex(laggingBlocks + 1), false]],
        ['eth_getBlockReceipts', [number]],
        ['eth_getBlockReceipts', [finalized.hash]],
        ['eth_getBlockTransactionCountByNumber', [number]],
        ['eth_getBlockTransactionCountByHash', [finalized.hash]],
        ['eth_getBalance', [`0x${'00'.repeat(19)}01`, number]],
        ['eth_getBalance', [`0x${'00'.repeat(19)}01`, { blockHash: finalized.hash }]],
        ['eth_getLogs', [{ fromBlock: hex(laggingBlocks + 1), toBlock: number }]],
        ['eth_getLogs', [{ blockHash: finalized.hash }]],
        ['eth_getTransactionByBlockNumberAndIndex', [number, '0x1']],
      ]
      const from = proxy.calls.length
      for (const [method, params] of cases) {
        const answer = await rpc(gateway.endpoint, method, params)
        const expected = await rpc(synced.url, method, params)
        const what = `${method} ${JSON.stringify(params)}`
        assert.ok(expected.result !== null && expected.result !== undefined, what)
        if (Array.isArray(expected.result)) assert.ok(expected.result.length > 0, what)
        assert.deepEqual(answer, expected, what)
      }
      // by number, the lagging node is not asked for a block above its head at all
      const byNumber = proxy.calls.slice(from).filter(({ method, params }) => {
        const [first] = params as [unknown]
        const block =
          method === 'eth_getBalance'
            ? params[1]
            : method === 'eth_getLogs'
              ? (first as { toBlock?: unknown }).toBlock
              : first
        return (
          typeof block === 'string' &&
          /^0x[0-9a-f]{1,16}$/.test(block) &&
          BigInt(block) > BigInt(laggingBlocks)
        )
      })
      assert.deepEqual(byNumber, [])
    })

    it('blocks it has, and a block no node has, are answered as the nodes answer them', async () => {
      const params = [hex(laggingBlocks - 1), false]
      assert.deepEqual(
        await rpc(gateway.endpoint, 'eth_getBlockByNumber', params),
        await rpc(lagging.url, 'eth_getBlockByNumber', params),
      )
      const unknown = `0x${'ab'.repeat(32)}`
      assert.deepEqual(await rpc(gateway.endpoint, 'eth_getBlockByHash', [unknown, false]), {
        jsonrpc: '2.0',
        id: 1,
        result: null,
      })
    })
  })
})
