// npm run bench:node-bound: node-bound calls (a full block of 250 transactions) through the node,
// the minimal pass-through and tollgate (cache off), interleaved: each round sends `conns` concurrent
// calls to one target, then to the next, in rotating order, so that the node's drift over time (its
// answers to the same call vary by tens of percent over a few seconds) falls on every target alike.
// BENCH_ROUNDS (default 12) rounds per connection count (BENCH_CONNECTIONS, default 1,16,64).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { seedDevnet } from '../src/devnet/seedDevnet.ts'
import { startAnvil } from '../src/devnet/startAnvil.ts'
import { mineBigBlock } from './lib/mineBigBlock.ts'
import { children, startPassThrough, startTollgate } from './lib/processes.ts'

const rounds = Number(process.env.BENCH_ROUNDS ?? 12)
const connectionsList = (process.env.BENCH_CONNECTIONS ?? '1,16,64').split(',').map(Number)

const anvil = await startAnvil()
const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'))
try {
  const fixtures = await seedDevnet(anvil.url, { loadBlocks: 2 })
  const bigBlock = await mineBigBlock(anvil.url, fixtures.accounts.slice(0, 8), 250)
  const tollgate = await startTollgate(dir, 'tollgate', { url: anvil.url }, { cache: { enabled: false } })
  const proxy = await startPassThrough(anvil.url, tollgate.key)
  const targets = [
    { name: 'node', url: anvil.url },
    { name: 'pass-through', url: proxy.url },
    { name: 'tollgate', url: tollgate.url },
  ]
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'eth_getBlockByNumber',
    params: [`0x${bigBlock.toString(16)}`, true],
  })
  const post = async (url: string) => {
    const response = await fetch(url, {
      method: 'POST',
      // identity: the node never compresses; tollgate's compressed answers are bench:compression's
      headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' },
      body,
    })
    const text = await response.text()
    if (!response.ok || !text.includes('"transactions"')) throw new Error(`${url}: HTTP ${response.status}`)
    return text.length
  }
  const sizes = await Promise.all(targets.map((target) => post(target.url)))
  if (new Set(sizes).size !== 1) throw new Error('the targets answer differently')

  const rows: string[] = []
  for (const connections of connectionsList) {
    const busyMs = new Map(targets.map((target) => [target.name, 0]))
    for (let round = 0; round < rounds; round++) {
      for (let index = 0; index < targets.length; index++) {
        const target = targets[(round + index) % targets.length] as (typeof targets)[number]
        const started = performance.now()
        await Promise.all(Array.from({ length: connections }, () => post(target.url)))
        busyMs.set(target.name, (busyMs.get(target.name) ?? 0) + performance.now() - started)
      }
    }
    const rps = (name: string) => (rounds * connections * 1000) / (busyMs.get(name) as number)
    const [node, pass, gate] = [rps('node'), rps('pass-through'), rps('tollgate')]
    const row = `| eth_getBlockByNumber (250 txs, full) | ${connections} | ${node.toFixed(1)} | ${pass.toFixed(1)} | ${gate.toFixed(1)} | ${Math.round((gate / node) * 100)}% | ${Math.round((gate / pass) * 100)}% |`
    rows.push(row)
    process.stdout.write(`${row}\n`)
  }
  process.stdout.write(
    `\n| call | conns | node req/s | pass-through req/s | tollgate req/s | tollgate/node | tollgate/pass-through |\n|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
  )
} finally {
  for (const child of children) child.kill('SIGTERM')
  await anvil.stop()
  rmSync(dir, { recursive: true, force: true })
}
