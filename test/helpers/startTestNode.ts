import { type DevnetFixtures, seedDevnet } from '../../src/devnet/seedDevnet.ts'
import { type Anvil, type StartAnvilOptions, startAnvil } from '../../src/devnet/startAnvil.ts'

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
