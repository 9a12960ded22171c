import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { pino } from 'pino'
import { until } from '../../test/helpers/until.ts'
import { configSchema, type NetworkConfig } from '../config/configSchema.ts'
import type { HeadEvent, Header } from '../networks/createHeadChain.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { RetiredStage } from '../pipeline/handleSocketUpgrade.ts'
import type { UpstreamPool } from '../upstreams/createUpstreamPool.ts'
import { createNetworkServices } from './createNetworkServices.ts'
import type { LiveNetwork } from './createNetworkStarter.ts'
import { createStores } from './createStores.ts'

const log = pino({ level: 'silent' })
const hash = (number: number) => `0x${number.toString(16).padStart(64, '0')}`
const header = (number: number): Header => ({
  number: `0x${number.toString(16)}`,
  hash: hash(number),
  parentHash: hash(number - 1),
  baseFeePerGas: `0x${(1_000 + number).toString(16)}`,
})
const config = configSchema.parse({
  gas: { windowBlocks: 8 },
  networks: [{ name: 'one', chainId: 1, upstreams: [{ url: 'http://one.example' }] }],
})
const networkConfig = config.networks[0] as NetworkConfig

/** A network named `one` on chain 1 whose node answers eth_feeHistory; `genesis` is its chain's identity. */
function fakeLive(genesis: string): LiveNetwork & { announce(number: number): void } {
  const listeners = new Set<(event: HeadEvent) => void>()
  let newest = header(10)
  const pool = {
    async send(body: string) {
      const { method, params } = JSON.parse(body) as { method: string; params: unknown[] }
      let result: unknown = null
      if (method === 'eth_feeHistory') {
        const count = Number(params[0])
        const last = Number(params[1])
        const numbers = Array.from({ length: count }, (_, index) => last - count + 1 + index)
        result = {
          oldestBlock: `0x${(last - count + 1).toString(16)}`,
          baseFeePerGas: [...numbers, last + 1].map((number) => `0x${(1_000 + number).toString(16)}`),
          gasUsedRatio: numbers.map(() => 0.5),
          reward: numbers.map(() => ['0x1', '0x2', '0x3', '0x4', '0x5']),
        }
      } else if (method === 'eth_getBlockByNumber') result = header(Number(params[0]))
      return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result }))
    },
  } as unknown as UpstreamPool
  const heads = {
    header: () => newest,
    genesis: () => genesis,
    subscribe(listener: (event: HeadEvent) => void) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    poll: async () => undefined,
  }
  const network = { name: 'one', chainId: 1, pool, heads } as unknown as Network
  return {
    network,
    config: networkConfig,
    stop: async () => {},
    announce(number) {
      newest = header(number)
      for (const listener of listeners) listener({ kind: 'head', header: newest })
    },
  }
}

describe('createNetworkServices', async () => {
  const stores = await createStores({ sqlite: ':memory:' }, { exclusive: false })
  after(() => stores.close())

  it('a rebuilt network: its hub and indexer are in place at once, serving the old window (same chain), indexing once the old one stopped', async () => {
    const services = createNetworkServices({ stores, indexesFees: true, log })
    const old = fakeLive('0xgenesis')
    services.add(old, config)
    const oldIndexer = services.indexers.get(1)
    await until(() => oldIndexer?.window()?.head === 10, "the old indexer's window")
    const oldHub = services.hubs.get('one')
    const oldWindow = oldIndexer?.window()

    const rebuilt = fakeLive('0xgenesis')
    services.add(rebuilt, config, old.network)
    const indexer = services.indexers.get(1)
    assert.notEqual(indexer, oldIndexer)
    const hub = services.hubs.get('one')
    assert.notEqual(hub, oldHub)
    assert.equal(indexer?.status(), 'ready', 'never "loading" after a rebuild')
    assert.equal(indexer?.window(), oldWindow, 'the old window, until it has its own')

    services.leave(old.network)
    assert.equal(services.indexers.get(1), indexer, 'the leaving one takes nothing of the new one with it')
    assert.equal(services.hubs.get('one'), hub)
    // the new one indexes (the old one stopped): a new head gives it a window of its own
    rebuilt.announce(11)
    await until(() => indexer?.window()?.head === 11, 'the new indexer indexing')
    services.retire(old.network)
    await services.close()
  })

  it('a rebuilt network on another chain under the same id (another genesis) is not served the old window', async () => {
    const services = createNetworkServices({ stores, indexesFees: true, log })
    const old = fakeLive('0xgenesis')
    services.add(old, config)
    await until(() => services.indexers.get(1)?.window() !== undefined, "the old indexer's window")
    services.add(fakeLive('0xother'), config, old.network)
    assert.equal(services.indexers.get(1)?.window(), undefined)
    await services.close()
  })

  it('onRetired tells each stage, and at once the stage a network has reached already', async () => {
    const services = createNetworkServices({ stores, indexesFees: false, log })
    const live = fakeLive('0xgenesis')
    services.add(live, config)
    const early: RetiredStage[] = []
    services.onRetired(live.network, (stage) => early.push(stage))
    services.leave(live.network)
    const late: RetiredStage[] = []
    services.onRetired(live.network, (stage) => late.push(stage))
    services.retire(live.network)
    const after: RetiredStage[] = []
    services.onRetired(live.network, (stage) => after.push(stage))
    assert.deepEqual([early, late, after], [['leaving', 'stopped'], ['leaving', 'stopped'], ['stopped']])
    assert.equal(services.hubs.get('one'), undefined)
    await services.close()
  })
})
