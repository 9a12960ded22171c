// npm run bench:backfill — how long the gas API's indexer takes to backfill 20,000 blocks of fee
// history from a local node (anvil), in chunks of 1024 blocks, into SQLite. target: under a minute.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { configSchema } from '../src/config/configSchema.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { createFeeIndexer } from '../src/gas/createFeeIndexer.ts'
import { createSqliteFeeHistoryStore } from '../src/gas/createSqliteFeeHistoryStore.ts'
import { createNetwork } from '../src/networks/createNetwork.ts'
import { openSqlite } from '../src/store/openSqlite.ts'

const blocks = Number(process.env.BENCH_BLOCKS ?? 20_000)
const anvil = await startAnvil({ extraArgs: ['--prune-history'] })
const dir = mkdtempSync(join(tmpdir(), 'tollgate-backfill-'))
try {
  // anvil_mine slows down sharply with the count in one call; 100 at a time stays fast
  for (let mined = 0; mined < blocks; mined += 100) {
    await fetch(anvil.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: ['0x64'] }),
    })
  }
  const defaults = configSchema.parse({})
  const network = createNetwork(
    { name: 'devnet', chainId: 31337, upstreams: [{ url: anvil.url }], partners: [], hosts: [] },
    {
      upstreams: { ...defaults.upstreams, connectionsPerUpstream: 4, headPollMs: 60_000 },
      cache: { ...defaults.cache, enabled: false },
      failoverMethods: new Set(),
    },
  )
  const db = openSqlite(join(dir, 'bench.db'))
  const indexer = createFeeIndexer({
    network,
    store: createSqliteFeeHistoryStore(db),
    windowBlocks: 20_000,
    chunkBlocks: 1024,
    pollMs: 60_000,
    log: pino({ level: 'warn' }),
  })
  const started = performance.now()
  await indexer.tick()
  const seconds = (performance.now() - started) / 1000
  const stored = indexer.window()?.blocks.length ?? 0
  process.stdout.write(
    `backfilled ${stored} blocks (head ${indexer.window()?.head}) in ${seconds.toFixed(2)} s: ${Math.round(stored / seconds)} blocks/s\n`,
  )
  await indexer.stop()
  await network.close()
  db.close()
} finally {
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}
