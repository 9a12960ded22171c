import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { encodeFunctionData } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import type { Network } from '../src/networks/createNetwork.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { hardhatMaxTxGas, startHardhatNode } from './helpers/startHardhatNode.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import type { TestNode } from './helpers/startTestNode.ts'

const cap = BigInt(hardhatMaxTxGas)
const hex = (value: bigint) => `0x${value.toString(16)}`

/**
 * Hardhat 3's node, which refuses a call's gas over EIP-7825's cap (2^24): the gas cap of 10x the
 * block gas limit alone left it refusing, with a figure the client never sent (issue 31).
 */
describe("EIP-7825's cap on a real node that enforces it: Hardhat 3 (docs/compatibility.md §7)", () => {
  let node: TestNode
  let gateway: TestGateway
  let blockGasLimit: bigint

  const counter = (gas: bigint) => ({
    gas: hex(gas),
    to: node.fixtures.demo,
    data: encodeFunctionData({ abi: demoAbi, functionName: 'counter' }),
  })
  const viaGateway = (network: string, gas: bigint, id: string) =>
    postJson(`${gateway.url}/${network}/v3/${gateway.key}`, rpcBody('eth_call', [counter(gas), 'latest'], id))
  const direct = (gas: bigint, id: string) =>
    postJson(node.url, rpcBody('eth_call', [counter(gas), 'latest'], id))
  const networkNamed = (name: string) =>
    gateway.app.networks.all.find((each) => each.name === name) as Network

  before(async () => {
    node = await startHardhatNode({ loadBlocks: 2 })
    const latest = (await postJson(node.url, rpcBody('eth_getBlockByNumber', ['latest', false]))).json as {
      result: { gasLimit: string }
    }
    blockGasLimit = BigInt(latest.result.gasLimit)
    gateway = await startTestGateway({
      config: {
        networks: ['tenfold', 'own'].map((name) => ({
          name,
          chainId: 31337,
          upstreams: [{ url: node.url }],
        })),
        cache: { enabled: false },
      },
    })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  it('Hardhat refuses gas one past the cap, quoting it', async () => {
    const refused = (await direct(cap + 1n, 'x')).json as { error?: { message: string } }
    assert.match(refused.error?.message ?? '', new RegExp(`${cap + 1n}.*${cap}`))
  })

  it("gas above 10x the block gas limit: lowered, refused by the node, then sent at the cap: Hardhat's answer for the cap", async () => {
    const sent = blockGasLimit * 10n + 1n
    const answer = await viaGateway('tenfold', sent, 'tenfold')
    assert.equal(answer.status, 200)
    assert.equal(answer.text, (await direct(cap, 'tenfold')).text)
    assert.equal(networkNamed('tenfold').maxTransactionGas, cap)
  })

  it("the client's own gas over the cap: Hardhat's refusal as it wrote it, then lowered to the cap learned", async () => {
    const first = await viaGateway('own', cap + 1n, 'own')
    assert.equal(first.text, (await direct(cap + 1n, 'own')).text)
    assert.ok('error' in (first.json as object))
    assert.equal(networkNamed('own').maxTransactionGas, cap)
    const second = await viaGateway('own', cap + 1n, 'again')
    assert.equal(second.text, (await direct(cap, 'again')).text)
    assert.ok('result' in (second.json as object))
  })
})
