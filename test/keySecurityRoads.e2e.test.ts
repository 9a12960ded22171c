import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { exportSPKI, generateKeyPair, SignJWT } from 'jose'
import {
  type Address,
  createWalletClient,
  encodeFunctionData,
  type Hex,
  http,
  numberToHex,
  publicActions,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { foundry } from 'viem/chains'
import WebSocket from 'ws'
import { demoAbi, demoBytecode } from '../src/devnet/contracts.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { devnetOver, nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'

const settingsError = { code: -32002, message: 'rejected due to project ID settings' }
const counter = encodeFunctionData({ abi: demoAbi, functionName: 'counter' })

type Answer = { id?: number; result?: unknown; error?: { code: number; message: string } }

/** A second Demo contract on the node: B, which the key may not reach. */
async function deployDemo(node: TestNode): Promise<Address> {
  const wallet = createWalletClient({ chain: foundry, transport: http(node.url, { retryCount: 0 }) }).extend(
    publicActions,
  )
  const hash = await wallet.deployContract({
    abi: demoAbi,
    bytecode: demoBytecode,
    args: [99n],
    account: node.fixtures.accounts[0] as Address,
  })
  const receipt = await wallet.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  return receipt.contractAddress as Address
}

/** A raw WebSocket client: calls answered by id. */
async function connect(url: string) {
  const socket = new WebSocket(url)
  const answers = new Map<number, (answer: Answer) => void>()
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as Answer
    if (message.id !== undefined) answers.get(message.id)?.(message)
  })
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
  let nextId = 1
  const call = (method: string, params: unknown[] = []) => {
    const id = nextId++
    const answer = new Promise<Answer>((resolve) => answers.set(id, resolve))
    socket.send(JSON.stringify(rpcBody(method, params, id)))
    return answer
  }
  return { socket, call }
}

describe('the contracts allowlist holds on every road', () => {
  let node: TestNode
  let gateway: TestGateway
  let a: Address
  let b: Address
  /** A key whose contracts allowlist is [A]. */
  let key: string

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    a = node.fixtures.demo
    b = await deployDemo(node)
    gateway = await startTestGateway({ config: { networks: devnetOver(node) } })
    key = (await gateway.app.keyAdmin.create({ plan: 'team' })).key.key
    await gateway.app.keyAdmin.addAllowlistEntries(key, 'contracts', [a])
    await gateway.app.keys.refresh()
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  const post = (body: unknown) => postJson(`${gateway.url}/v3/${key}`, body)

  async function assertAllowed(method: string, params: unknown[]) {
    const answer = await post(rpcBody(method, params))
    assert.equal(answer.status, 200, `${method}: ${answer.text}`)
    assert.ok((answer.json as Answer).result !== undefined, `${method}: ${answer.text}`)
    return (answer.json as Answer).result
  }

  async function assertRefused(method: string, params: unknown[]) {
    const answer = await post(rpcBody(method, params))
    assert.equal(answer.status, 403, `${method}: ${answer.text}`)
    assert.deepEqual(answer.json, { jsonrpc: '2.0', id: 1, error: settingsError })
    assert.equal(answer.headers.get('x-credits-charged'), '5')
  }

  it('eth_call to A works as before; a state override of A’s balance too, of B’s or of A’s code is refused', async () => {
    assert.equal(
      await assertAllowed('eth_call', [{ to: a, data: counter }, 'latest']),
      `0x${node.fixtures.counterValue.toString(16).padStart(64, '0')}`,
    )
    await assertAllowed('eth_call', [{ to: a, data: counter }, 'latest', { [a]: { balance: '0x1' } }])
    await assertRefused('eth_call', [{ to: a, data: counter }, 'latest', { [b]: { balance: '0x1' } }])
    // code that returns B's counter would be A's: refused whatever it is
    await assertRefused('eth_call', [{ to: a, data: counter }, 'latest', { [a]: { code: '0x00' } }])
    await assertRefused('eth_call', [{ to: b, data: counter }, 'latest'])
    await assertRefused('eth_estimateGas', [{ to: a }, 'latest', { [a]: { code: '0x00' } }])
    // a second `to` that geth would read (it matches field names case-insensitively)
    await assertRefused('eth_call', [{ to: a, TO: b, data: counter }, 'latest'])
  })

  it('debug_traceCall and trace_call to B are refused; to A they reach the node', async () => {
    await assertRefused('debug_traceCall', [{ to: b, data: counter }, 'latest', { tracer: 'callTracer' }])
    const traced = (await assertAllowed('debug_traceCall', [
      { to: a, data: counter },
      'latest',
      { tracer: 'callTracer' },
    ])) as { to: string }
    assert.equal(traced.to.toLowerCase(), a.toLowerCase())
    // a JavaScript tracer can read any contract's state: refused for every key, as code run on the node
    // under any name geth reads as `tracer` (it matches names case-insensitively)
    for (const name of ['tracer', 'Tracer', 'TRACER']) {
      const scripted = await post(
        rpcBody('debug_traceCall', [{ to: a }, 'latest', { [name]: '{result: function() {}}' }]),
      )
      assert.equal((scripted.json as { error?: { code: number } }).error?.code, -32602, name)
    }
    await assertRefused('debug_traceCall', [
      { to: a },
      'latest',
      { tracer: 'callTracer', stateOverrides: { [a]: { code: '0x00' } } },
    ])
    await assertRefused('debug_traceCall', [
      { to: a },
      'latest',
      { StateOverrides: { [a]: { CODE: '0x00' } } },
    ])
    await assertRefused('trace_call', [{ to: b, data: counter }, ['trace'], 'latest'])
    // anvil has no trace_call: its own answer shows the call went to it
    const toA = await post(rpcBody('trace_call', [{ to: a, data: counter }, ['trace'], 'latest']))
    assert.equal(toA.status, 200)
    assert.equal((toA.json as Answer).error?.code, -32601)
  })

  it('EIP-7702: a call whose authorization delegates to B’s code is refused; to A’s it reaches the node', async () => {
    // an account of the caller's own, E, listed beside A: a delegation makes its code any contract's
    const owner = privateKeyToAccount(generatePrivateKey())
    const e = owner.address
    const listed = (await gateway.app.keyAdmin.create({ plan: 'team' })).key.key
    await gateway.app.keyAdmin.addAllowlistEntries(listed, 'contracts', [a, e])
    await gateway.app.keys.refresh()
    const delegate = async (target: Address) => {
      const signed = await owner.signAuthorization({ contractAddress: target, chainId: 31337, nonce: 0 })
      return {
        chainId: numberToHex(signed.chainId),
        address: signed.address,
        nonce: numberToHex(signed.nonce),
        yParity: numberToHex(signed.yParity ?? 0),
        r: signed.r,
        s: signed.s,
      }
    }
    const toB = [await delegate(b)]
    const toA = [await delegate(a)]
    const call = (authorizationList: unknown[] | undefined) => ({
      to: e,
      data: counter,
      ...(authorizationList ? { authorizationList } : {}),
    })
    const send = async (method: string, params: unknown[]) => {
      const answer = await postJson(`${gateway.url}/v3/${listed}`, rpcBody(method, params))
      return {
        status: answer.status,
        body: answer.json as Answer,
        charged: answer.headers.get('x-credits-charged'),
      }
    }

    // E has no code: the call answers nothing. Delegated to B, the node runs B's code as E's
    assert.equal((await send('eth_call', [call(undefined), 'latest'])).body.result, '0x')
    const run = (await nodeRpc(node, 'eth_call', [call(toB), 'latest'])) as Hex
    assert.equal(run.length, 66, 'the node runs the delegated code')
    for (const [method, params] of [
      ['eth_call', [call(toB), 'latest']],
      ['eth_estimateGas', [call(toB), 'latest']],
      ['eth_createAccessList', [call(toB), 'latest']],
      ['debug_traceCall', [call(toB), 'latest', { tracer: 'callTracer' }]],
      ['eth_simulateV1', [{ blockStateCalls: [{ calls: [call(toB)] }] }, 'latest']],
      // an authorization whose target cannot be read, or a list that is not one
      ['eth_call', [call([{ ...toA[0], address: undefined }]), 'latest']],
      ['eth_call', [{ ...call(undefined), authorizationList: toA[0] }, 'latest']],
      // every field geth reads as authorizationList
      ['eth_call', [{ ...call(toA), AuthorizationList: toB }, 'latest']],
    ] as const) {
      const refused = await send(method, [...params])
      assert.deepEqual(
        refused,
        { status: 403, body: { jsonrpc: '2.0', id: 1, error: settingsError }, charged: '5' },
        `${method} ${JSON.stringify(params)}`,
      )
    }

    // delegated to A, which the key may reach: the node runs A's code as E's (E's counter slot: 0)
    const allowed = await send('eth_call', [call(toA), 'latest'])
    assert.equal(allowed.body.result, `0x${'0'.repeat(64)}`)
    const [simulated] = (
      await send('eth_simulateV1', [{ blockStateCalls: [{ calls: [call(toA)] }] }, 'latest'])
    ).body.result as { calls: { returnData: string }[] }[]
    assert.equal(simulated?.calls[0]?.returnData, `0x${'0'.repeat(64)}`)
  })

  it('eth_simulateV1: every call and override must be allowed', async () => {
    const simulate = (block: object) => [{ blockStateCalls: [block] }, 'latest']
    const [simulated] = (await assertAllowed(
      'eth_simulateV1',
      simulate({ calls: [{ to: a, data: counter }] }),
    )) as { calls: { returnData: string }[] }[]
    assert.equal(simulated?.calls[0]?.returnData.length, 66)
    await assertRefused(
      'eth_simulateV1',
      simulate({
        calls: [
          { to: a, data: counter },
          { to: b, data: counter },
        ],
      }),
    )
    await assertRefused(
      'eth_simulateV1',
      simulate({ calls: [{ to: a }], stateOverrides: { [a]: { code: '0x00' } } }),
    )
    await assertRefused(
      'eth_simulateV1',
      simulate({ calls: [{ to: a }], stateOverrides: { [b]: { balance: '0x1' } } }),
    )
  })

  it('traces of blocks and transactions cannot be checked: refused, even in a batch beside allowed calls', async () => {
    await assertRefused('debug_traceTransaction', [node.fixtures.legacyTx])
    await assertRefused('debug_traceBlockByNumber', ['latest'])
    await assertRefused('trace_transaction', [node.fixtures.legacyTx])
    await assertRefused('trace_block', ['latest'])
    const batch = await post([
      rpcBody('eth_blockNumber', [], 1),
      rpcBody('debug_traceTransaction', [node.fixtures.legacyTx], 2),
      rpcBody('eth_getTransactionReceipt', [node.fixtures.legacyTx], 3),
    ])
    assert.equal(batch.status, 200)
    const [head, trace, receipt] = batch.json as Answer[]
    assert.match(String(head?.result), /^0x[0-9a-f]+$/)
    assert.deepEqual(trace, { jsonrpc: '2.0', id: 2, error: settingsError })
    assert.ok(receipt?.result, 'chain data stays allowed')
  })

  it('eth_getLogs with allowed addresses works as before; without, or with B, it is refused', async () => {
    const logs = (await assertAllowed('eth_getLogs', [{ address: a, fromBlock: '0x0' }])) as {
      address: string
    }[]
    assert.ok(logs.length > 0)
    await assertRefused('eth_getLogs', [{ address: [a, b], fromBlock: '0x0' }])
    await assertRefused('eth_getLogs', [{ fromBlock: '0x0' }])
    await assertRefused('eth_newFilter', [{ address: b }])
  })

  it('WebSocket: a logs subscription must name allowed addresses; heads touch no contract', async () => {
    const client = await connect(`${gateway.url.replace('http', 'ws')}/ws/v3/${key}`)
    try {
      for (const filter of [{ address: b }, { address: [a, b] }, {}, { address: [] }, { topics: [] }]) {
        const answer = await client.call('eth_subscribe', ['logs', filter])
        assert.deepEqual(answer.error, settingsError, JSON.stringify(filter))
      }
      assert.deepEqual((await client.call('eth_subscribe', ['logs'])).error, settingsError)
      assert.match(
        String((await client.call('eth_subscribe', ['logs', { address: a }])).result),
        /^0x[0-9a-f]{32}$/,
      )
      assert.match(String((await client.call('eth_subscribe', ['newHeads'])).result), /^0x[0-9a-f]{32}$/)
      // the other calls of a socket are held to it as over HTTP
      assert.deepEqual((await client.call('debug_traceCall', [{ to: b }, 'latest'])).error, settingsError)
    } finally {
      client.socket.close()
    }
  })

  it('a JWT with `addresses` narrows every road the same way, on a key without an allowlist', async () => {
    const open = (await gateway.app.keyAdmin.create({ plan: 'team' })).key.key
    const pair = await generateKeyPair('ES256')
    await gateway.app.keyAdmin.addJwtKey(open, 'ec-1', await exportSPKI(pair.publicKey))
    await gateway.app.keys.refresh()
    const jwt = await new SignJWT({ addresses: [a] })
      .setProtectedHeader({ alg: 'ES256', kid: 'ec-1' })
      .setExpirationTime(Math.floor(Date.now() / 1000) + 600)
      .sign(pair.privateKey)
    const withJwt = (method: string, params: unknown[]) =>
      postJson(`${gateway.url}/v3/${open}`, rpcBody(method, params), {
        'content-type': 'application/json',
        authorization: `Bearer ${jwt}`,
      })
    assert.equal(
      (await withJwt('debug_traceCall', [{ to: a }, 'latest', { tracer: 'callTracer' }])).status,
      200,
    )
    for (const [method, params] of [
      ['debug_traceCall', [{ to: b }, 'latest', { tracer: 'callTracer' }]],
      ['eth_simulateV1', [{ blockStateCalls: [{ calls: [{ to: b }] }] }, 'latest']],
      ['eth_call', [{ to: a }, 'latest', { [a]: { code: '0x00' } }]],
      ['debug_traceTransaction', [node.fixtures.legacyTx]],
    ] as const) {
      assert.equal((await withJwt(method, [...params])).status, 403, method)
    }
    // without the JWT the key has no allowlist: the same trace passes
    const bare = await postJson(
      `${gateway.url}/v3/${open}`,
      rpcBody('debug_traceTransaction', [node.fixtures.legacyTx]),
    )
    assert.equal(bare.status, 200)
  })
})
