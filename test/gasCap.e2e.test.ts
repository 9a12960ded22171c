import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { encodeFunctionData } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import type { Network } from '../src/networks/createNetwork.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

/** EIP-7825's per-transaction gas cap, 2^24. */
const cap = 16_777_216n
const hex = (value: bigint) => `0x${value.toString(16)}`

type Call = { method: string; id: unknown; params: unknown[] }

/**
 * A node enforcing EIP-7825 on calls, as Hardhat 3 does: anvil (1.7) does not refuse calls over the
 * cap even with `--hardfork osaka`, so a scriptable fake in front of a real anvil gives the refusal
 * only (Hardhat 3's wording, quoting the gas it was sent or its own default, the block gas limit);
 * every call within the cap is anvil's to answer.
 */
describe('eth_call and eth_estimateGas gas over the per-transaction cap (EIP-7825, docs/compatibility.md §7)', () => {
  let node: TestNode
  let enforcer: FakeUpstream
  let gateway: TestGateway
  let blockGasLimit: bigint

  const calls = () =>
    enforcer.requests.filter(
      (request) => request.method === 'eth_call' || request.method === 'eth_estimateGas',
    )
  const gasOf = (request: Call) => (request.params[0] as { gas?: string }).gas
  const gasLeft = (gas?: bigint) => ({
    from: node.fixtures.accounts[1],
    to: node.fixtures.demo,
    data: encodeFunctionData({ abi: demoAbi, functionName: 'gasLeft' }),
    ...(gas === undefined ? {} : { gas: hex(gas) }),
  })
  const call = (network: string, method: string, params: unknown[], id: string) =>
    postJson(`${gateway.url}/${network}/v3/${gateway.key}`, rpcBody(method, params, id))
  const networkNamed = (name: string) =>
    gateway.app.networks.all.find((each) => each.name === name) as Network

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    const latest = (await postJson(node.url, rpcBody('eth_getBlockByNumber', ['latest', false]))).json as {
      result: { gasLimit: string }
    }
    blockGasLimit = BigInt(latest.result.gasLimit)
    enforcer = await startFakeUpstream({
      kind: 'refuseOr',
      target: node.url,
      refuse: (request) => {
        if (request.method !== 'eth_call' && request.method !== 'eth_estimateGas') return undefined
        const gas = gasOf(request)
        const sent = gas === undefined ? blockGasLimit : BigInt(gas)
        if (sent <= cap) return undefined
        return {
          error: {
            code: -32000,
            message: `Transaction gas limit is ${sent} and exceeds transaction gas cap of ${cap}`,
          },
        }
      },
    })
    const on = (name: string, extra: object = {}) => ({
      name,
      chainId: 31337,
      upstreams: [{ url: enforcer.url }],
      ...extra,
    })
    gateway = await startTestGateway({
      config: {
        networks: [
          on('learns'),
          on('tenfold'),
          on('configured', { maxTransactionGas: Number(cap) }),
          on('defaults'),
        ],
        cache: { enabled: false },
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await enforcer?.close()
    await node?.stop()
  })

  it('the node refuses gas over the cap, and its block gas limit is over the cap', () => {
    assert.ok(blockGasLimit > cap, `anvil's block gas limit ${blockGasLimit}`)
  })

  it("the client's own gas refused is the node's answer, as the node wrote it; the cap is learned and later gas lowered to it", async () => {
    const asked = calls().length
    const sentGas = 30_000_000n
    const refused = await call('learns', 'eth_call', [gasLeft(sentGas), 'latest'], 'own')
    assert.equal(refused.status, 200)
    assert.deepEqual(refused.json, {
      jsonrpc: '2.0',
      id: 'own',
      error: {
        code: -32000,
        message: `Transaction gas limit is ${sentGas} and exceeds transaction gas cap of ${cap}`,
      },
    })
    assert.equal(networkNamed('learns').maxTransactionGas, cap)
    assert.deepEqual(calls().slice(asked).map(gasOf), [hex(sentGas)], 'asked once')

    // from then on, gas over the cap is lowered before any node is asked
    const before = calls().length
    const lowered = await call('learns', 'eth_estimateGas', [gasLeft(2n * cap)], 'second')
    const estimated = await postJson(node.url, rpcBody('eth_estimateGas', [gasLeft(cap)], 'second'))
    assert.equal(lowered.text, estimated.text)
    assert.deepEqual(calls().slice(before).map(gasOf), [hex(cap)], 'one call, at the cap')
  })

  it("gas tollgate lowered (to 10x the block gas limit) and the node refused: sent again at the cap, the node's answer for that gas", async () => {
    const asked = calls().length
    const sentGas = blockGasLimit * 10n + 1n
    const answer = await call('tenfold', 'eth_call', [gasLeft(sentGas), 'latest'], 'tenfold')
    const direct = await postJson(node.url, rpcBody('eth_call', [gasLeft(cap), 'latest'], 'tenfold'))
    assert.equal(answer.status, 200)
    assert.equal(answer.text, direct.text, "anvil's answer for the call at the cap")
    assert.deepEqual(
      calls().slice(asked).map(gasOf),
      [hex(blockGasLimit * 10n), hex(cap)],
      'refused at the tenfold cap tollgate sent, answered at the cap',
    )
    assert.equal(networkNamed('tenfold').maxTransactionGas, cap)
  })

  it('a call without gas the node refuses at its own default: sent at the cap, and later ones too, without a refusal', async () => {
    const asked = calls().length
    const answer = await call('defaults', 'eth_call', [gasLeft(), 'latest'], 'nogas')
    const direct = await postJson(node.url, rpcBody('eth_call', [gasLeft(cap), 'latest'], 'nogas'))
    assert.equal(answer.text, direct.text)
    assert.ok(!answer.text.includes(String(blockGasLimit)), "no error quoting the node's default")
    assert.deepEqual(calls().slice(asked).map(gasOf), [undefined, hex(cap)])
    assert.equal(networkNamed('defaults').fillsTransactionGas, true)

    const before = calls().length
    const again = await call('defaults', 'eth_call', [gasLeft(), 'latest'], 'again')
    assert.equal(again.text, direct.text.replace('"nogas"', '"again"'))
    assert.deepEqual(calls().slice(before).map(gasOf), [hex(cap)], 'sent at the cap at once')
    assert.equal(again.headers.get('x-credits-charged'), '80', 'charged once, at the method price')
  })

  it('a configured maxTransactionGas lowers gas before any node is asked; gas within it is sent as it is', async () => {
    const asked = calls().length
    const answer = await call('configured', 'eth_call', [gasLeft(20_000_000n), 'latest'], 'configured')
    const direct = await postJson(node.url, rpcBody('eth_call', [gasLeft(cap), 'latest'], 'configured'))
    assert.equal(answer.text, direct.text)
    const within = await call('configured', 'eth_call', [gasLeft(1_000_000n), 'latest'], 'within')
    const directWithin = await postJson(
      node.url,
      rpcBody('eth_call', [gasLeft(1_000_000n), 'latest'], 'within'),
    )
    assert.equal(within.text, directWithin.text)
    assert.deepEqual(calls().slice(asked).map(gasOf), [hex(cap), hex(1_000_000n)])
    assert.equal(
      networkNamed('configured').fillsTransactionGas,
      false,
      'calls without gas keep the node default',
    )
  })
})
