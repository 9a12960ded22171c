import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type Address, encodeAbiParameters, encodeFunctionData, keccak256, toEventSelector } from 'viem'
import { HttpProvider, Web3, WebSocketProvider } from 'web3'
import WebSocket from 'ws'
import { demoAbi } from '../src/devnet/contracts.ts'
import { rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { devnetOver, mineIncrement, nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'
import { untilAnnounced } from './helpers/untilAnnounced.ts'

type ErrorSummary = {
  class: string
  message: string
  code: unknown
  data: unknown
  errorName: unknown
  errorSignature: unknown
  errorArgs: unknown
  cause: ErrorSummary | undefined
}

/** What a client can tell of a failed call: the error's class, message and details, and its cause's. */
function describeError(err: unknown): ErrorSummary | undefined {
  if (!(err instanceof Error)) return undefined
  const { code, data, errorName, errorSignature, errorArgs } = err as Error & Record<string, unknown>
  return {
    class: err.constructor.name,
    message: err.message,
    code,
    data,
    errorName,
    errorSignature,
    errorArgs,
    cause: describeError(err.cause),
  }
}

const rejectionOf = (promise: Promise<unknown>) =>
  promise.then(
    () => assert.fail('expected the call to revert'),
    (err: unknown) => describeError(err),
  )

/** A raw WebSocket client that records every message with whether it came in a binary frame. */
async function connect(url: string) {
  const socket = new WebSocket(url)
  const messages: { isBinary: boolean; message: unknown }[] = []
  socket.on('message', (data, isBinary) => messages.push({ isBinary, message: JSON.parse(data.toString()) }))
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  const answer = (id: number) =>
    messages.find((each) => (each.message as { id?: unknown }).id === id)?.message as
      | { result?: unknown; error?: { code: number } }
      | undefined
  return { socket, messages, answer }
}

describe('web3.js 4 through the gateway', { timeout: 60_000 }, () => {
  let node: TestNode
  let gateway: TestGateway
  let keeper: Awaited<ReturnType<typeof connect>>

  const rpc = (method: string, params: unknown[] = []) => nodeRpc(node, method, params)
  const increment = () => mineIncrement(node)
  const wsUrl = () => `${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    gateway = await startTestGateway({ config: { networks: devnetOver(node) } })
    // One newHeads subscription kept open for the whole file, with blocks mined until it hears one:
    // the gateway's head feed (whose first head only anchors its chain) then runs, so a client that
    // subscribes later hears of every block mined after its subscription was answered.
    keeper = await connect(wsUrl())
    keeper.socket.send(JSON.stringify(rpcBody('eth_subscribe', ['newHeads'], 1)))
    await until(() => keeper.answer(1) !== undefined, 'the subscription id')
    await untilAnnounced(
      () => rpc('anvil_mine', ['0x1']),
      () => keeper.messages.length > 1,
    )
  })
  after(async () => {
    keeper?.socket.close()
    await gateway?.close()
    await node?.stop()
  })

  for (const transport of ['HTTP', 'WebSocket'] as const) {
    describe(`over ${transport}`, () => {
      let viaGateway: Web3
      let viaNode: Web3

      before(() => {
        if (transport === 'HTTP') {
          viaGateway = new Web3(new HttpProvider(gateway.endpoint))
          viaNode = new Web3(new HttpProvider(node.url))
        } else {
          viaGateway = new Web3(new WebSocketProvider(wsUrl()))
          // anvil drops the socket without a closing handshake (1006), which web3 answers by
          // reconnecting forever: against the node itself, no reconnecting
          viaNode = new Web3(new WebSocketProvider(node.wsUrl, {}, { autoReconnect: false }))
        }
      })
      after(() => {
        if (transport === 'HTTP') return
        for (const web3 of [viaGateway, viaNode])
          (web3?.currentProvider as WebSocketProvider | undefined)?.disconnect()
      })

      it('blocks by number and by hash, with and without transactions', async () => {
        const { eip1559Tx } = node.fixtures
        const receipt = await viaNode.eth.getTransactionReceipt(eip1559Tx)
        for (const hydrated of [false, true]) {
          const byNumber = await viaGateway.eth.getBlock(receipt.blockNumber, hydrated)
          assert.deepEqual(byNumber, await viaNode.eth.getBlock(receipt.blockNumber, hydrated))
          const byHash = await viaGateway.eth.getBlock(receipt.blockHash, hydrated)
          assert.deepEqual(byHash, byNumber)
          const [transaction] = byNumber.transactions
          assert.equal(typeof transaction === 'string' ? transaction : transaction?.hash, eip1559Tx)
        }
        assert.deepEqual(await viaGateway.eth.getBlock('latest'), await viaNode.eth.getBlock('latest'))
      })

      it('receipts of every kind of transaction', async () => {
        const { deployTx, legacyTx, accessListTx, eip1559Tx, failedTx } = node.fixtures
        for (const hash of [deployTx, legacyTx, accessListTx, eip1559Tx, failedTx]) {
          assert.deepEqual(
            await viaGateway.eth.getTransactionReceipt(hash),
            await viaNode.eth.getTransactionReceipt(hash),
          )
        }
        assert.equal((await viaGateway.eth.getTransactionReceipt(failedTx)).status, 0n)
        assert.equal(
          (await viaGateway.eth.getTransactionReceipt(deployTx)).contractAddress?.toLowerCase(),
          node.fixtures.demo.toLowerCase(),
        )
      })

      it('eth_call, and reverts with a reason string and with a custom error: the same errors as from the node', async () => {
        const { demo, accounts, counterValue } = node.fixtures
        const caller = accounts[1] as Address
        const contract = (web3: Web3) => new web3.eth.Contract(demoAbi, demo)
        assert.equal(await contract(viaGateway).methods.counter().call(), counterValue)

        const reason = await rejectionOf(contract(viaGateway).methods.failWithReason().call())
        assert.deepEqual(reason, await rejectionOf(contract(viaNode).methods.failWithReason().call()))
        assert.equal(reason?.class, 'ContractExecutionError')
        assert.match(String(reason?.cause?.message), /Demo: not allowed/)

        const failWithCustomError = (web3: Web3) =>
          contract(web3).methods.failWithCustomError().call({ from: caller })
        const custom = await rejectionOf(failWithCustomError(viaGateway))
        assert.deepEqual(custom, await rejectionOf(failWithCustomError(viaNode)))
        const cause = custom?.cause as ErrorSummary & { errorArgs: { caller: string; code: bigint } }
        assert.equal(cause.errorName, 'NotAllowed')
        assert.equal(cause.errorArgs.caller.toLowerCase(), caller.toLowerCase())
        assert.equal(cause.errorArgs.code, 42n)

        // a bare eth_call, with no ABI to decode the revert with
        const call = (web3: Web3) =>
          web3.eth.call({
            to: demo,
            data: encodeFunctionData({ abi: demoAbi, functionName: 'failWithReason' }),
          })
        const bare = await rejectionOf(call(viaGateway))
        assert.deepEqual(bare, await rejectionOf(call(viaNode)))
        assert.match(String(bare?.cause?.data), /^0x08c379a0/)
      })

      it('storage slots, proofs and access lists', async () => {
        const { demo, mappingKey, mappingValue, accounts } = node.fixtures
        const from = accounts[2] as Address
        const blockNumber = await viaNode.eth.getBlockNumber()
        // balances is at slot 1: keccak256(pad32(key) ++ pad32(1))
        const mappingSlot = keccak256(
          encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [mappingKey, 1n]),
        )
        for (const slot of ['0x0', mappingSlot]) {
          assert.deepEqual(
            await viaGateway.eth.getStorageAt(demo, slot, blockNumber),
            await viaNode.eth.getStorageAt(demo, slot, blockNumber),
          )
        }
        assert.equal(BigInt(await viaGateway.eth.getStorageAt(demo, mappingSlot, blockNumber)), mappingValue)

        const storageKeys = [`0x${'0'.repeat(64)}`, mappingSlot]
        const proof = await viaGateway.eth.getProof(demo, storageKeys, blockNumber)
        assert.deepEqual(proof, await viaNode.eth.getProof(demo, storageKeys, blockNumber))
        assert.equal(proof.storageProof[1]?.value, mappingValue)

        const request = {
          from,
          to: demo,
          data: encodeFunctionData({ abi: demoAbi, functionName: 'increment' }),
        }
        const accessList = await viaGateway.eth.createAccessList(request, blockNumber)
        assert.deepEqual(accessList, await viaNode.eth.createAccessList(request, blockNumber))
        assert.ok(accessList.accessList?.[0]?.storageKeys?.includes(`0x${'0'.repeat(64)}`))
      })

      it('past logs, by address and by topic', async () => {
        const { demo } = node.fixtures
        const toBlock = await viaNode.eth.getBlockNumber()
        const incremented = toEventSelector('Incremented(address,uint256)')
        for (const filter of [
          { address: demo, fromBlock: 0, toBlock },
          { topics: [incremented], fromBlock: 0, toBlock },
        ]) {
          const logs = await viaGateway.eth.getPastLogs(filter)
          assert.deepEqual(logs, await viaNode.eth.getPastLogs(filter))
          assert.ok(logs.length >= 2)
        }
      })

      it('a batch request, with an answer, a revert and an unknown method in it', async () => {
        const { demo } = node.fixtures
        const failWithReason = encodeFunctionData({ abi: demoAbi, functionName: 'failWithReason' })
        const execute = (web3: Web3) => {
          const batch = new web3.BatchRequest()
          const requests = [
            { method: 'eth_getBlockByNumber', params: ['0x1', false] },
            { method: 'eth_call', params: [{ to: demo, data: failWithReason }, 'latest'] },
            { method: 'eth_nope', params: [] },
          ]
          for (const [index, request] of requests.entries()) {
            // each request's own promise settles too; the batch's answer is what is compared
            batch.add({ jsonrpc: '2.0', id: index + 1, ...request }).catch(() => undefined)
          }
          return batch.execute()
        }
        const answers = await execute(viaGateway)
        const fromNode = await execute(viaNode)
        const byId = (list: typeof answers) => [...list].sort((a, b) => Number(a.id) - Number(b.id))
        assert.deepEqual(byId(answers).slice(0, 2), byId(fromNode).slice(0, 2))
        const [block, reverted, unknown] = byId(answers) as unknown as [
          { result: { number: string } },
          { error: { code: number; data: string } },
          { error: { code: number } },
        ]
        assert.equal(block.result.number, '0x1')
        assert.equal(reverted.error.code, 3)
        assert.match(reverted.error.data, /^0x08c379a0/)
        // the gateway's own answer (-32601 over either transport; anvil over WebSocket says -32602
        // `data did not match any variant of untagged enum EthRpcCall`)
        assert.equal(unknown.error.code, -32601)
      })

      if (transport === 'WebSocket') {
        it("subscribe('newBlockHeaders') and subscribe('logs'): the same headers and logs as from the node", async () => {
          const { demo } = node.fixtures
          const heard = [viaGateway, viaNode].map(() => ({
            headers: new Map<string, unknown>(),
            logs: [] as unknown[],
          }))
          const subscriptions = await Promise.all(
            [viaGateway, viaNode].flatMap((web3, index) => {
              const into = heard[index] as (typeof heard)[number]
              return [
                web3.eth.subscribe('newBlockHeaders').then((subscription) => {
                  subscription.on('data', (header) => {
                    into.headers.set(String(header.hash), header)
                  })
                  return subscription
                }),
                web3.eth.subscribe('logs', { address: demo }).then((subscription) => {
                  subscription.on('data', (log) => {
                    into.logs.push(log)
                  })
                  return subscription
                }),
              ]
            }),
          )
          try {
            const blocks: string[] = []
            for (let index = 0; index < 2; index++) {
              blocks.push(await increment())
            }
            await rpc('anvil_mine', ['0x1'])
            blocks.push(String((await viaNode.eth.getBlock('latest')).hash))

            const [fromGateway, fromNode] = heard as [(typeof heard)[number], (typeof heard)[number]]
            await until(
              () =>
                blocks.every((hash) => fromGateway.headers.has(hash) && fromNode.headers.has(hash)) &&
                fromGateway.logs.length >= 2 &&
                fromNode.logs.length >= 2,
              'both clients to hear every block and log',
            )
            for (const hash of blocks)
              assert.deepEqual(fromGateway.headers.get(hash), fromNode.headers.get(hash))
            assert.deepEqual(fromGateway.logs, fromNode.logs)
            assert.equal(fromGateway.logs.length, 2)
          } finally {
            for (const subscription of subscriptions) await subscription.unsubscribe()
          }
        })
      }
    })
  }

  it('every WebSocket frame is text: answers, cached answers, batches, errors and notifications', async () => {
    const client = await connect(wsUrl())
    try {
      const send = (body: unknown) =>
        client.socket.send(typeof body === 'string' ? body : JSON.stringify(body))
      send(rpcBody('eth_subscribe', ['newHeads'], 1))
      send(rpcBody('eth_subscribe', ['logs', { address: node.fixtures.demo }], 2))
      await until(
        () => client.answer(1) !== undefined && client.answer(2) !== undefined,
        'the subscription ids',
      )
      send(rpcBody('eth_getBlockByNumber', ['0x1', false], 3))
      await until(() => client.answer(3) !== undefined, 'the block')
      // the same again: answered from the cache
      send(rpcBody('eth_getBlockByNumber', ['0x1', false], 4))
      send([rpcBody('eth_chainId', [], 5), rpcBody('eth_nope', [], 6)])
      send(rpcBody('eth_getBlockByNumber', ['0x01', false], 7))
      const failWithReason = encodeFunctionData({ abi: demoAbi, functionName: 'failWithReason' })
      send(rpcBody('eth_call', [{ to: node.fixtures.demo, data: failWithReason }, 'latest'], 8))
      send('{"jsonrpc":"2.0","id":9,')
      await increment()
      const notifications = () =>
        client.messages.filter((each) => (each.message as { method?: string }).method === 'eth_subscription')
      await until(
        () =>
          client.answer(4) !== undefined &&
          client.answer(7) !== undefined &&
          client.answer(8) !== undefined &&
          client.messages.some((each) => Array.isArray(each.message)) &&
          client.messages.some((each) => (each.message as { id?: unknown }).id === null) &&
          notifications().length >= 2,
        'every answer and notification',
      )
      assert.deepEqual(client.answer(4)?.result, client.answer(3)?.result)
      assert.equal(client.answer(7)?.error?.code, -32602)
      assert.ok(client.answer(8)?.error, 'the call reverted')
      assert.deepEqual(
        client.messages.filter((each) => each.isBinary).map((each) => each.message),
        [],
        'no binary frames',
      )
    } finally {
      client.socket.close()
    }
  })
})
