import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { configSchema } from './configSchema.ts'

const network = { name: 'devnet', chainId: 31337, upstreams: [{ url: 'http://127.0.0.1:8545' }] }

describe('configSchema: upstreams.hedge', () => {
  it('is on by default: p90 of recent latencies, within 50..1000 ms', () => {
    const config = configSchema.parse({ networks: [network] })
    assert.deepEqual(config.upstreams.hedge, {
      enabled: true,
      quantile: 0.9,
      minDelayMs: 50,
      maxDelayMs: 1_000,
      samples: 64,
    })
  })

  it('can be switched off, and refuses a minimum above the maximum or a quantile outside 0..1', () => {
    const off = configSchema.parse({ networks: [network], upstreams: { hedge: { enabled: false } } })
    assert.equal(off.upstreams.hedge.enabled, false)
    for (const hedge of [{ minDelayMs: 2_000 }, { quantile: 1.5 }]) {
      assert.equal(configSchema.safeParse({ networks: [network], upstreams: { hedge } }).success, false)
    }
  })
})

describe('configSchema: server.cors.origins', () => {
  it("takes origins as a key's origins allowlist does, in the same stored form", () => {
    const origins = ['https://App.example/', '*.example.com', 'localhost:5173']
    const config = configSchema.parse({ networks: [network], server: { cors: { origins } } })
    assert.deepEqual(config.server.cors.origins, ['https://app.example', '*.example.com', 'localhost:5173'])
  })

  it('refuses what is not an origin, saying which entry', () => {
    for (const origin of ['https://app.example/path', 'ftp://app.example', '', '*']) {
      const result = configSchema.safeParse({ networks: [network], server: { cors: { origins: [origin] } } })
      assert.equal(result.success, false, origin)
      assert.match(result.error?.issues[0]?.message ?? '', /is not an origin/)
      assert.deepEqual(result.error?.issues[0]?.path, ['server', 'cors', 'origins', 0])
    }
  })
})

describe('configSchema: cache.shared', () => {
  it('is on by default (used only with redis): 24 h answers, 50 ms lookups, 20 ms head grace, 64 MiB per chain', () => {
    const config = configSchema.parse({ networks: [network] })
    assert.deepEqual(config.cache.shared, {
      enabled: true,
      ttlSeconds: 86_400,
      waitMs: 50,
      headGraceMs: 20,
      maxBytes: 64 * 1024 * 1024,
    })
  })

  it('refuses a ttl of 0 (answers kept forever), a negative one, a budget or a wait of 0, a head grace past 1 s', () => {
    for (const shared of [
      { ttlSeconds: 0 },
      { ttlSeconds: -1 },
      { ttlSeconds: 1.5 },
      { maxBytes: 0 },
      { waitMs: 0 },
      { headGraceMs: -1 },
      { headGraceMs: 1_001 },
    ]) {
      const result = configSchema.safeParse({ networks: [network], cache: { shared } })
      assert.equal(result.success, false, JSON.stringify(shared))
      assert.equal(result.error?.issues[0]?.path[1], 'shared')
    }
  })
})

describe('configSchema: the shares of the bounds on bytes in flight', () => {
  const mib = 1024 * 1024
  const parse = (server: Record<string, unknown>) => configSchema.safeParse({ networks: [network], server })

  it('are a quarter of each bound by default, never below one request of it', () => {
    const { server } = configSchema.parse({ networks: [network] })
    assert.equal(server.maxBodyBytesInFlightPerClient, 8 * mib, 'a quarter of 32 MiB')
    assert.equal(
      server.maxAnswerBytesInFlightPerClient,
      32 * mib,
      "a quarter of 64 MiB is below one 32 MiB answer's",
    )
    assert.equal(server.bodyStallTimeoutMs, 5_000)
    const raised = parse({ maxBodyBytesInFlight: 64 * mib, maxAnswerBytesInFlight: 256 * mib })
    assert.equal(raised.data?.server.maxBodyBytesInFlightPerClient, 16 * mib)
    assert.equal(raised.data?.server.maxAnswerBytesInFlightPerClient, 64 * mib)
  })

  it('may be set, from one request of the bound to the whole of it', () => {
    assert.equal(
      parse({ maxBodyBytesInFlightPerClient: 5 * mib }).data?.server.maxBodyBytesInFlightPerClient,
      5 * mib,
    )
    assert.equal(parse({ maxBodyBytesInFlightPerClient: 32 * mib }).success, true)
    for (const server of [
      { maxBodyBytesInFlightPerClient: 5 * mib - 1 },
      { maxBodyBytesInFlightPerClient: 32 * mib + 1 },
      { maxAnswerBytesInFlightPerClient: 32 * mib - 1 },
      { maxAnswerBytesInFlightPerClient: 64 * mib + 1 },
    ]) {
      const parsed = parse(server)
      assert.equal(parsed.success, false, JSON.stringify(server))
      assert.deepEqual(parsed.error?.issues[0]?.path, ['server', Object.keys(server)[0]])
    }
  })
})
