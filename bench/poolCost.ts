// npm run bench:pool: CPU per call of the upstream pool's send (one upstream that answers on the next
// turn of the event loop, in process: no sockets) for this checkout and for each checkout in
// BENCH_BASES (comma-separated paths), rounds interleaved: what the failsafe layers (attempt,
// timeout, hedge set-up, retry loop) cost per call, apart from everything else on the request path.
// Each checkout's pool is loaded from its sources through tsx (the build bundles it with the rest,
// so there is no file of its own to load), every checkout alike. BENCH_CALLS per round (default
// 50,000), 9 rounds.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { UpstreamPool, UpstreamPoolOptions } from '../src/upstreams/createUpstreamPool.ts'

type CreatePool = (upstreams: unknown[], options: UpstreamPoolOptions) => UpstreamPool

const calls = Number(process.env.BENCH_CALLS ?? 50_000)
const rounds = 9
const checkouts = ['.', ...(process.env.BENCH_BASES?.split(',').filter(Boolean) ?? [])]

const answer = { status: 200, body: Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x10"}') }
/** Both of an upstream's faces: `post` (a promise, older builds) and `dispatch` (a callback). */
const fakeUpstream = () => ({
  label: 'fake',
  post(_body: string, { onStart }: { onStart?: (abort: () => void) => void } = {}) {
    return new Promise((done) => {
      onStart?.(() => {})
      setImmediate(() => done(answer))
    })
  },
  dispatch(
    _body: string,
    { onStart }: { onStart?: (abort: () => void) => void },
    done: (r: unknown) => void,
  ) {
    onStart?.(() => {})
    setImmediate(() => done({ response: answer }))
  },
  close: async () => {},
})
const options: UpstreamPoolOptions = {
  timeoutMs: 10_000,
  attemptTimeoutMs: 5_000,
  maxAttempts: 3,
  maxLagBlocks: 5,
  breakerFailures: 5,
  breakerCooldownMs: 1_000,
  breakerMaxCooldownMs: 10_000,
  hedge: { quantile: 0.9, minDelayMs: 50, maxDelayMs: 1_000, samples: 64 },
}

const pools = new Map<string, UpstreamPool>()
for (const checkout of checkouts) {
  const file = resolve(checkout, 'src/upstreams/createUpstreamPool.ts')
  const { createUpstreamPool } = (await import(pathToFileURL(file).href)) as {
    createUpstreamPool: CreatePool
  }
  pools.set(checkout === '.' ? 'this' : checkout, createUpstreamPool([fakeUpstream()], options))
}

const results = new Map<string, number[]>()
for (let round = 0; round < rounds; round++) {
  const names = [...pools.keys()]
  for (const name of round % 2 === 0 ? names : names.reverse()) {
    const pool = pools.get(name) as UpstreamPool
    const before = process.cpuUsage()
    for (let sent = 0; sent < calls; sent += 64) {
      const batch: Promise<Buffer>[] = []
      for (let index = 0; index < 64; index++)
        batch.push(pool.send('{}', { retry: true, headSensitive: true }))
      await Promise.all(batch)
    }
    const used = process.cpuUsage(before)
    results.set(name, [...(results.get(name) ?? []), (used.user + used.system) / calls])
  }
}
process.stdout.write('| build | CPU µs per send, median of 9 rounds | rounds |\n|---|---|---|\n')
for (const [name, each] of results) {
  const sorted = [...each].sort((a, b) => a - b)
  const median = sorted[sorted.length >> 1] as number
  process.stdout.write(
    `| ${name} | ${median.toFixed(2)} | ${each.map((value) => value.toFixed(2)).join(', ')} |\n`,
  )
}
