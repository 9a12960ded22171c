import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { createPublicClient, type Hex, http, keccak256, parseEther } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { foundry } from 'viem/chains'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeBehaviour, type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const method = 'eth_sendRawTransactionSync'

const settings = {
  // shorter than the waits below: the call's deadline must grow by the node's wait
  timeoutMs: 2_000,
  attemptTimeoutMs: 500,
  headPollMs: 600_000,
  breaker: { failures: 100, cooldownMs: 60_000, maxCooldownMs: 60_000 },
}

/**
 * eth_sendRawTransactionSync (EIP-7966) through the gateway (docs/compatibility.md §2, §7), on a
 * real anvil. Two fake upstreams stand in front of it: they pass calls through to anvil's own
 * eth_sendRawTransactionSync, or answer it as geth does (`syncSends`: anvil 1.7 refuses the timeout
 * argument and never answers the EIP's code 4), or fail as only a fake can (a dropped connection).
 */
describe('eth_sendRawTransactionSync (EIP-7966)', () => {
  let node: TestNode
  let first: FakeUpstream
  let second: FakeUpstream
  let gateway: TestGateway
  const account = privateKeyToAccount(generatePrivateKey())
  let nonce = 0

  const nodeCall = async (name: string, params: unknown[]) =>
    (await postJson(node.url, rpcBody(name, params))).json as { result?: unknown; error?: unknown }

  /** A signed transfer from the test account, with the next nonce. */
  function signed(): Promise<Hex> {
    return account.signTransaction({
      chainId: foundry.id,
      type: 'eip1559',
      to: '0x000000000000000000000000000000000000dEaD',
      value: parseEther('0.001'),
      nonce: nonce++,
      gas: 21_000n,
      maxFeePerGas: 100_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    })
  }

  const proxy = (): FakeBehaviour => ({ kind: 'proxy', target: node.url })
  const asGeth = (defaultTimeoutMs = 1_000): FakeBehaviour => ({
    kind: 'syncSends',
    target: node.url,
    defaultTimeoutMs,
  })
  const syncCalls = (fake: FakeUpstream) => fake.requests.filter((request) => request.method === method)
  const callsSoFar = () => [syncCalls(first).length, syncCalls(second).length]

  /** Mining off on the node itself for `work`, then on again with the pending transactions mined. */
  async function withoutMining(work: () => Promise<void>): Promise<void> {
    await nodeCall('evm_setAutomine', [false])
    try {
      await work()
    } finally {
      await nodeCall('evm_setAutomine', [true])
      await nodeCall('evm_mine', [])
    }
  }

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    await nodeCall('anvil_setBalance', [account.address, `0x${parseEther('100').toString(16)}`])
    first = await startFakeUpstream({ kind: 'proxy', target: node.url })
    second = await startFakeUpstream({ kind: 'proxy', target: node.url })
    gateway = await startTestGateway({
      upstreams: [first.url, second.url],
      config: { upstreams: settings, cache: { enabled: false } },
    })
  })
  after(async () => {
    await gateway?.close()
    await first?.close()
    await second?.close()
    await node?.stop()
  })
  beforeEach(() => {
    first.behave(proxy())
    second.behave(proxy())
  })

  it("answers the node's receipt (viem's sendRawTransactionSync), at 160 credits", async () => {
    const before = callsSoFar()
    const client = createPublicClient({
      chain: foundry,
      transport: http(gateway.endpoint, { retryCount: 0 }),
    })
    const raw = await signed()
    const receipt = await client.sendRawTransactionSync({ serializedTransaction: raw })
    assert.equal(receipt.transactionHash, keccak256(raw))
    assert.equal(receipt.status, 'success')

    const next = await signed()
    const response = await postJson(gateway.endpoint, rpcBody(method, [next], 7))
    const direct = await nodeCall('eth_getTransactionReceipt', [keccak256(next)])
    assert.equal(response.status, 200)
    assert.deepEqual(response.json, { jsonrpc: '2.0', id: 7, result: direct.result })
    assert.equal(response.headers.get('x-credits-charged'), '160')
    assert.deepEqual(callsSoFar(), [(before[0] as number) + 2, before[1]], 'each sent once, never hedged')
  })

  it('a timeout goes to the node as a number; anvil 1.7, which takes none, refuses it itself', async () => {
    const raw = await signed()
    nonce-- // anvil refuses the call: the nonce stays free
    const response = await postJson(gateway.endpoint, rpcBody(method, [raw, '0x3e8'], 8))
    const direct = await postJson(node.url, rpcBody(method, [raw, 1_000], 8))
    assert.deepEqual(response.json, direct.json)
    assert.equal((response.json as { error: { code: number } }).error.code, -32602)
    assert.deepEqual(syncCalls(first).at(-1)?.params, [raw, 1_000])
  })

  it('bad timeouts are refused before any node is asked: -32602 naming the forms or the limit, 5 credits', async () => {
    const raw = await signed()
    nonce--
    const forms =
      'invalid argument 1: expected a timeout in milliseconds: a non-negative integer or a 0x-prefixed hex quantity'
    const tooLarge = 'invalid argument 1: timeout too large, the limit is 60000 ms'
    const cases: [unknown, string][] = [
      [-1, forms],
      [1.5, forms],
      ['soon', forms],
      ['2000', forms],
      ['0x07d0', forms],
      [true, forms],
      [{ ms: 1 }, forms],
      [60_001, tooLarge],
      ['0xea61', tooLarge],
      [1e21, tooLarge],
    ]
    const before = callsSoFar()
    for (const [timeout, message] of cases) {
      const response = await postJson(gateway.endpoint, rpcBody(method, [raw, timeout], 9))
      assert.deepEqual(
        response.json,
        { jsonrpc: '2.0', id: 9, error: { code: -32602, message } },
        JSON.stringify(timeout),
      )
      assert.equal(response.headers.get('x-credits-charged'), '5')
    }
    assert.deepEqual(callsSoFar(), before, 'no node was asked')
  })

  it("the node's own timeout (code 4, the hash as data) passes through, charged 160 and never resent; the wait outlasts upstreams.timeoutMs", async () => {
    first.behave(asGeth())
    second.behave(asGeth())
    await withoutMining(async () => {
      const raw = await signed()
      const before = callsSoFar()
      // 3 s: longer than the call's 2 s deadline and the attempt's 0.5 s, which grow by it
      const response = await postJson(gateway.endpoint, rpcBody(method, [raw, '0xbb8'], 10))
      assert.deepEqual(response.json, {
        jsonrpc: '2.0',
        id: 10,
        error: {
          code: 4,
          message: "The transaction was added to the transaction pool but wasn't processed in 3000ms",
          data: keccak256(raw),
        },
      })
      assert.equal(response.headers.get('x-credits-charged'), '160')
      assert.deepEqual(callsSoFar(), [(before[0] as number) + 1, before[1]], 'sent once')
      assert.deepEqual(syncCalls(first).at(-1)?.params, [raw, 3_000], 'the hex timeout sent as a number')
    })
  })

  it('resent after a failure a node may have seen, to a node that mined it (anvil: nonce too low): the receipt', async () => {
    // the first upstream's node takes the call (anvil mines at once) and the connection drops
    first.behave({
      kind: 'forMethods',
      methods: [method],
      behaviour: { kind: 'deliverThenDrop', target: node.url },
      otherwise: node.url,
    })
    second.behave(asGeth())
    const raw = await signed()
    const hash = keccak256(raw)
    const before = callsSoFar()
    const response = await postJson(gateway.endpoint, rpcBody(method, [raw], 11))
    const direct = await nodeCall('eth_getTransactionReceipt', [hash])
    assert.ok(direct.result, 'mined')
    assert.deepEqual(response.json, { jsonrpc: '2.0', id: 11, result: direct.result })
    assert.equal(response.headers.get('x-credits-charged'), '160')
    assert.deepEqual(callsSoFar(), [(before[0] as number) + 1, (before[1] as number) + 1])
    const lookUps = second.requests.filter(
      (request) => request.method === 'eth_getTransactionReceipt' && request.params[0] === hash,
    )
    assert.ok(lookUps.length > 0, 'the second node was asked for the receipt')
  })

  it("the same while it is pending (anvil: already imported): EIP-7966 code 4 with the hash, at 160; the client resending it gets the node's own answer", async () => {
    await withoutMining(async () => {
      // the first upstream hands the call to a node that waits 300 ms for the receipt, then drops
      first.behave({
        kind: 'forMethods',
        methods: [method],
        behaviour: { kind: 'deliverThenDrop', target: second.url },
        otherwise: node.url,
      })
      second.behave(asGeth(300))
      const raw = await signed()
      const response = await postJson(gateway.endpoint, rpcBody(method, [raw], 12))
      assert.deepEqual(response.json, {
        jsonrpc: '2.0',
        id: 12,
        error: {
          code: 4,
          message: "the transaction was added to the transaction pool but wasn't processed yet",
          data: keccak256(raw),
        },
      })
      assert.equal(response.headers.get('x-credits-charged'), '160')
      assert.ok(
        (await nodeCall('eth_getTransactionByHash', [keccak256(raw)])).result,
        'the node has it, once',
      )

      // a client's own second send is a first send to the gateway: the node's answer, as it is
      first.behave(asGeth())
      const again = await postJson(gateway.endpoint, rpcBody(method, [raw], 13))
      const direct = await nodeCall('eth_sendRawTransaction', [raw])
      assert.deepEqual(again.json, { jsonrpc: '2.0', id: 13, error: direct.error })
    })
  })

  it('anvil with mining off answers its own fixed 30 s wait with -32603: passed through, far past upstreams.timeoutMs, at 160', async () => {
    await withoutMining(async () => {
      const raw = await signed()
      const before = callsSoFar()
      const response = await postJson(gateway.endpoint, rpcBody(method, [raw], 14))
      assert.deepEqual(response.json, {
        jsonrpc: '2.0',
        id: 14,
        error: { code: -32603, message: 'Transaction confirmation timeout' },
      })
      assert.equal(response.headers.get('x-credits-charged'), '160')
      assert.deepEqual(callsSoFar(), [(before[0] as number) + 1, before[1]], 'sent once, never resent')
    })
  })
})
