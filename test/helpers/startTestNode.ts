import { createPublicClient, encodeFunctionData, type Hash, http } from 'viem'
import { demoAbi } from '../../src/devnet/contracts.ts'
import { type DevnetFixtures, seedDevnet } from '../../src/devnet/seedDevnet.ts'
import { type Anvil, type StartAnvilOptions, startAnvil } from '../../src/devnet/startAnvil.ts'
import { postJson, rpcBody } from './postJson.ts'

export type TestNode = Anvil & { fixtures: DevnetFixtures }

/** A real anvil, seeded like the embedded devnet (fewer load blocks by default, for speed). */
export async function startTestNode(
  options: StartAnvilOptions & { loadBlocks?: number } = {},
): Promise<TestNode> {
  const anvil = await startAnvil(options)
  try {
    const fixtures = await seedDevnet(anvil.url, { loadBlocks: options.loadBlocks ?? 40 })
    return { ...anvil, fixtures }
  } catch (err) {
    await anvil.stop()
    throw err
  }
}

/** Config for one network `devnet` on this node, over HTTP and its WebSocket. */
export function devnetOver(node: TestNode) {
  return [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url, ws: node.wsUrl }] }]
}

/** One JSON-RPC call to the node itself (anvil_* included), answering its result. */
export async function nodeRpc(node: TestNode, method: string, params: unknown[] = []): Promise<unknown> {
  return ((await postJson(node.url, rpcBody(method, params))).json as { result: unknown }).result
}

/**
 * Sends the Demo contract's increment() from a dev account and answers the hash of the block that
 * mined it (anvil answers the send before it mines, so the receipt is waited for).
 */
export async function mineIncrement(node: TestNode): Promise<Hash> {
  const hash = (await nodeRpc(node, 'eth_sendTransaction', [
    {
      from: node.fixtures.accounts[2],
      to: node.fixtures.demo,
      data: encodeFunctionData({ abi: demoAbi, functionName: 'increment' }),
    },
  ])) as Hash
  const client = createPublicClient({ transport: http(node.url, { retryCount: 0 }) })
  return (await client.waitForTransactionReceipt({ hash, pollingInterval: 20 })).blockHash
}
