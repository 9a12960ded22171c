import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { encodeFunctionData } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const hex = (value: bigint) => `0x${value.toString(16)}`
/** proxyd's `max_block_range`. */
const maxBlockRange = 8n
/** Blocks holding the Demo contract's logs, one in each. */
const blockCount = 30n

type Call = {
  jsonrpc: string
  id: unknown
  method: string
  params: [{ fromBlock?: string; toBlock?: string }]
}

/**
 * proxyd in front of anvil, as far as its block range limit goes: an eth_getLogs over more than
 * `maxBlockRange` blocks is answered HTTP 400 with proxyd's own body (its members in its order, the
 * request's id), everything else is anvil's answer. `getLogs` holds the ranges it was asked.
 */
async function startProxyd(nodeUrl: string) {
  const getLogs: [bigint, bigint][] = []
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', async () => {
      const body = Buffer.concat(chunks).toString()
      const call = JSON.parse(body) as Call
      if (call.method === 'eth_getLogs') {
        const { fromBlock, toBlock } = call.params[0]
        const range: [bigint, bigint] = [BigInt(fromBlock as string), BigInt(toBlock as string)]
        getLogs.push(range)
        if (range[1] - range[0] + 1n > maxBlockRange) {
          response.writeHead(400, { 'content-type': 'application/json' })
          response.end(
            `{"jsonrpc":"2.0","error":{"code":-32602,"message":"block range greater than ${maxBlockRange} max"},"id":${JSON.stringify(call.id)}}`,
          )
          return
        }
      }
      const answer = await fetch(nodeUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
      response.writeHead(answer.status, { 'content-type': 'application/json' })
      response.end(Buffer.from(await answer.arrayBuffer()))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    getLogs,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/**
 * proxyd's range refusal (HTTP 400, -32602 `block range greater than 1000 max`), named by no vendor
 * rule: tollgate reads it by its meaning, splits the range at the width it states, and answers
 * anvil's own logs for the whole range, charged 255 for each range the node was asked
 * (docs/plans.md: the refused range, then each chunk).
 */
describe("eth_getLogs behind proxyd's block range limit is split, not refused", () => {
  let node: TestNode
  let proxyd: Awaited<ReturnType<typeof startProxyd>>
  let gateway: TestGateway
  let first: bigint

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    const rpc = async (method: string, params: unknown[] = []) =>
      ((await postJson(node.url, rpcBody(method, params))).json as { result: unknown }).result
    first = BigInt((await rpc('eth_blockNumber')) as string) + 1n
    const sender = node.fixtures.accounts[3] as string
    for (let block = 0n; block < blockCount; block++) {
      await rpc('eth_sendTransaction', [
        {
          from: sender,
          to: node.fixtures.demo,
          data: encodeFunctionData({ abi: demoAbi, functionName: 'increment' }),
        },
      ])
    }
    proxyd = await startProxyd(node.url)
    gateway = await startTestGateway({
      upstreams: [proxyd.url],
      config: { cache: { enabled: false }, upstreams: { headPollMs: 600_000 } },
    })
  })
  after(async () => {
    await gateway?.close()
    await proxyd?.close()
    await node?.stop()
  })

  it("anvil's own answer for the whole range, in chunks of proxyd's width, each range asked charged at 255", async () => {
    const filter = {
      fromBlock: hex(first),
      toBlock: hex(first + blockCount - 1n),
      address: node.fixtures.demo,
    }
    const asked = proxyd.getLogs.length
    const answer = await postJson(gateway.endpoint, rpcBody('eth_getLogs', [filter], 'wide'))
    const direct = await postJson(node.url, rpcBody('eth_getLogs', [filter], 'wide'))
    assert.equal(answer.status, 200)
    assert.equal(answer.text, direct.text, 'byte for byte')
    assert.equal((answer.json as { result: unknown[] }).result.length, Number(blockCount))
    // the chunks go four at once: in the order they were asked, by their first block
    const ranges = proxyd.getLogs.slice(asked).map(([from, to]) => [Number(from - first), Number(to - first)])
    assert.deepEqual(ranges[0], [0, 29], 'the whole range first, refused')
    assert.deepEqual(
      ranges.slice(1).sort((a, b) => (a[0] as number) - (b[0] as number)),
      [
        [0, 7],
        [8, 15],
        [16, 23],
        [24, 29],
      ],
      'then chunks of the 8 blocks proxyd states',
    )
    assert.equal(answer.headers.get('x-credits-charged'), String(5 * 255))
  })

  it("a range within proxyd's limit is asked whole, once", async () => {
    const filter = {
      fromBlock: hex(first),
      toBlock: hex(first + maxBlockRange - 1n),
      address: node.fixtures.demo,
    }
    const asked = proxyd.getLogs.length
    const answer = await postJson(gateway.endpoint, rpcBody('eth_getLogs', [filter], 7))
    assert.equal(answer.text, (await postJson(node.url, rpcBody('eth_getLogs', [filter], 7))).text)
    assert.equal(proxyd.getLogs.length - asked, 1)
    assert.equal(answer.headers.get('x-credits-charged'), '255')
  })
})
