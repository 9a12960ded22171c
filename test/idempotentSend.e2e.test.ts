import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { createPublicClient, type Hex, http, keccak256, parseEther } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { foundry } from 'viem/chains'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeBehaviour, type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const settings = {
  timeoutMs: 10_000,
  // a first upstream that stalls is left after this for the second
  attemptTimeoutMs: 500,
  headPollMs: 600_000,
  breaker: { failures: 100, cooldownMs: 60_000, maxCooldownMs: 60_000 },
}

describe('eth_sendRawTransaction is idempotent across resends (docs/compatibility.md §7)', () => {
  let node: TestNode
  let first: FakeUpstream
  let second: FakeUpstream
  let gateway: TestGateway
  const account = privateKeyToAccount(generatePrivateKey())
  let nonce = 0

  const nodeCall = async (method: string, params: unknown[]) =>
    (await postJson(node.url, rpcBody(method, params))).json as { result?: unknown; error?: unknown }

  /** A signed transfer from the test account, with the next nonce unless one is given. */
  async function signed(options: { nonce?: number; value?: string } = {}): Promise<Hex> {
    return account.signTransaction({
      chainId: foundry.id,
      type: 'eip1559',
      to: '0x000000000000000000000000000000000000dEaD',
      value: parseEther(options.value ?? '0.001'),
      nonce: options.nonce ?? nonce++,
      gas: 21_000n,
      maxFeePerGas: 100_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    })
  }

  const onSend = (behaviour: FakeBehaviour): FakeBehaviour => ({
    kind: 'forMethods',
    methods: ['eth_sendRawTransaction'],
    behaviour,
    otherwise: node.url,
  })
  const sends = (fake: FakeUpstream) =>
    fake.requests.filter((request) => request.method === 'eth_sendRawTransaction').length

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
    first.behave({ kind: 'proxy', target: node.url })
    second.behave({ kind: 'proxy', target: node.url })
  })

  it('the first upstream takes it and drops the connection; anvil, having mined it, says nonce too low: viem gets the hash', async () => {
    const raw = await signed()
    first.behave(onSend({ kind: 'deliverThenDrop', target: node.url }))
    const [firstBefore, secondBefore] = [sends(first), sends(second)]
    const client = createPublicClient({
      chain: foundry,
      transport: http(gateway.endpoint, { retryCount: 0 }),
    })

    const hash = await client.sendRawTransaction({ serializedTransaction: raw })
    assert.equal(hash, keccak256(raw))
    assert.deepEqual([sends(first), sends(second)], [firstBefore + 1, secondBefore + 1], 'sent once to each')
    // anvil answers a send before it mines it: the node's own receipt, once there
    const viaNode = createPublicClient({ chain: foundry, transport: http(node.url, { retryCount: 0 }) })
    const receipt = await viaNode.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    assert.equal(receipt.status, 'success', 'mined once')
  })

  it('the same with the transaction still pending: anvil says it is already imported, the client gets the hash', async () => {
    await nodeCall('evm_setAutomine', [false])
    try {
      const raw = await signed()
      first.behave(onSend({ kind: 'deliverThenDrop', target: node.url }))
      const response = await postJson(gateway.endpoint, rpcBody('eth_sendRawTransaction', [raw], 'tx'))
      assert.deepEqual(response.json, { jsonrpc: '2.0', id: 'tx', result: keccak256(raw) })
      const pending = (await nodeCall('eth_getTransactionByHash', [keccak256(raw)])).result
      assert.ok(pending, 'the node has it')
    } finally {
      await nodeCall('evm_setAutomine', [true])
      await nodeCall('evm_mine', [])
    }
  })

  const knownSpellings = [
    { client: 'geth, erigon, reth', error: { code: -32000, message: 'already known' } },
    { client: 'besu', error: { code: -32000, message: 'Known transaction' } },
    { client: 'nethermind', error: { code: -32010, message: 'AlreadyKnown' } },
    { client: 'erigon', error: { code: -32000, message: 'INTERNAL_ERROR: existing tx with same hash' } },
  ]
  for (const { client, error } of knownSpellings) {
    it(`the first upstream times out; the second answers "${error.message}" (${client}): the client gets the hash`, async () => {
      const raw = await signed({ nonce: 1_000, value: client.length.toString() })
      first.behave(onSend({ kind: 'hang' }))
      second.behave(onSend({ kind: 'rpcError', error }))
      const response = await postJson(gateway.endpoint, rpcBody('eth_sendRawTransaction', [raw], 3))
      assert.deepEqual(response.json, { jsonrpc: '2.0', id: 3, result: keccak256(raw) })
    })
  }

  it('never blindly: `already known` for a first send passes through, and no other upstream is asked', async () => {
    const raw = await signed({ nonce: 2_000 })
    const error = { code: -32000, message: 'already known' }
    first.behave(onSend({ kind: 'rpcError', error }))
    const secondBefore = sends(second)
    const response = await postJson(gateway.endpoint, rpcBody('eth_sendRawTransaction', [raw], 4))
    assert.deepEqual(response.json, { jsonrpc: '2.0', id: 4, error })
    assert.equal(sends(second), secondBefore)
  })

  it('`nonce too low` on a resend for another transaction that took the nonce passes through', async () => {
    const mine = nonce++
    // a different transaction with the same nonce reaches the chain first
    await nodeCall('eth_sendRawTransaction', [await signed({ nonce: mine, value: '0.002' })])
    const raw = await signed({ nonce: mine, value: '0.003' })
    // the first upstream loses it without passing it on
    first.behave(onSend({ kind: 'drop' }))
    const response = await postJson(gateway.endpoint, rpcBody('eth_sendRawTransaction', [raw], 5))
    const direct = await postJson(node.url, rpcBody('eth_sendRawTransaction', [raw], 5))
    assert.deepEqual(response.json, direct.json)
    assert.match(JSON.stringify(response.json), /nonce too low/)
    assert.ok(
      second.requests.some(
        (request) => request.method === 'eth_getTransactionByHash' && request.params[0] === keccak256(raw),
      ),
      'the node was asked whether it has this transaction',
    )
  })
})
