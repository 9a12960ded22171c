import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { configSchema } from './configSchema.ts'
import { liveConfigKeys } from './liveConfigKeys.ts'
import { ConfigError } from './loadConfig.ts'
import { planReload } from './planReload.ts'

const network = (name: string, url: string) => ({ name, chainId: 1, upstreams: [{ url }] })
const parse = (raw: unknown) => configSchema.parse(raw)

describe('planReload', () => {
  it('takes live keys, names each one, and keeps each restart-only key at its running value', () => {
    const current = parse({
      server: { port: 8545 },
      storage: { sqlite: './a.db' },
      networks: [network('main', 'http://a.example')],
    })
    const next = parse({
      server: { port: 9000, maxBatchSize: 10 },
      storage: { postgres: 'postgres://db.example/tollgate' },
      redis: { url: 'redis://r.example' },
      networks: [network('main', 'http://b.example')],
      plans: { core: { dailyCredits: 5 } },
    })
    const plan = planReload(current, next)
    assert.deepEqual(plan.changed, ['server.maxBatchSize', 'networks', 'plans.core.dailyCredits'])
    assert.deepEqual(plan.refused, ['server.port', 'storage.sqlite', 'storage.postgres', 'redis'])
    assert.equal(plan.config.server.port, 8545)
    assert.equal(plan.config.server.maxBatchSize, 10)
    assert.deepEqual(plan.config.storage, { sqlite: './a.db' })
    assert.equal(plan.config.redis, undefined)
    assert.equal(plan.config.networks[0]?.upstreams[0]?.url, 'http://b.example')
    assert.equal(plan.config.plans.core.dailyCredits, 5)
    assert.equal(next.server.port, 9000, 'the new config itself is left as it was')
  })

  it('nothing changed: nothing to take or refuse', () => {
    const config = parse({ networks: [network('main', 'http://a.example')] })
    const plan = planReload(config, structuredClone(config))
    assert.deepEqual([plan.changed, plan.refused], [[], []])
  })

  it('takes exactly the keys of the live-keys table (docs/config.md is checked against it): every other key is refused', () => {
    const live = liveConfigKeys.flatMap((row) => row.keys)
    // every key set, optional ones included
    const base = parse({
      redis: { url: 'redis://r.example' },
      devnet: {},
      admin: { token: 'a'.repeat(16) },
      metrics: { token: 'm'.repeat(16) },
      failover: { methods: ['eth_call'] },
      metering: { spoolDir: './spool' },
      networks: [network('main', 'http://a.example')],
      defaultNetwork: 'main',
    })
    const leaves: string[][] = []
    const walk = (path: string[], value: unknown) => {
      if (typeof value === 'object' && value !== null && !Array.isArray(value))
        for (const [key, child] of Object.entries(value)) walk([...path, key], child)
      else leaves.push(path)
    }
    walk([], base)
    for (const path of leaves) {
      const name = path.join('.')
      const next = structuredClone(base) as Record<string, unknown>
      let parent = next
      for (const key of path.slice(0, -1)) parent = parent[key] as Record<string, unknown>
      parent[path[path.length - 1] as string] = '(changed)'
      const plan = planReload(base, next as typeof base)
      const isLive = live.some((key) => name === key || name.startsWith(`${key}.`))
      assert.deepEqual([plan.changed, plan.refused], isLive ? [[name], []] : [[], [name]], name)
    }
    assert.ok(leaves.some((path) => path.join('.') === 'defaultNetwork'))
  })

  it('the un-prefixed URLs keep their network: adding networks after it, or beside the devnet, moves nothing', () => {
    const current = parse({ networks: [network('one', 'http://a.example')] })
    const added = planReload(
      current,
      parse({ networks: [network('one', 'http://a.example'), network('two', 'http://b.example')] }),
    )
    assert.equal(added.moved, undefined)
    const onDevnet = parse({ devnet: {} })
    // the devnet needs a restart to go: kept, and still the default
    const besideDevnet = planReload(onDevnet, parse({ networks: [network('two', 'http://b.example')] }))
    assert.deepEqual([besideDevnet.refused, besideDevnet.moved], [['devnet'], undefined])
  })

  it('a file that would move them without naming it in defaultNetwork is refused whole; naming it moves them', () => {
    const current = parse({
      networks: [network('one', 'http://a.example'), network('two', 'http://b.example')],
    })
    const refusals = [
      // listed first, one removed, the default turned off by leaving out what turned it on
      parse({ networks: [network('two', 'http://b.example'), network('one', 'http://a.example')] }),
      parse({ networks: [network('two', 'http://b.example')] }),
    ]
    for (const next of refusals)
      assert.throws(
        () => planReload(current, next),
        (err) =>
          err instanceof ConfigError &&
          err.message.includes("serve network 'one'; this file would move them to 'two'") &&
          err.message.includes('Set defaultNetwork: one to keep them, or defaultNetwork: two to move them'),
      )
    const kept = planReload(current, parse({ ...refusals[0], defaultNetwork: 'one' }))
    assert.deepEqual([kept.changed, kept.moved], [['networks', 'defaultNetwork'], undefined])
    const moved = planReload(
      current,
      parse({ networks: [network('two', 'http://b.example')], defaultNetwork: 'two' }),
    )
    assert.deepEqual(moved.moved, { from: 'one', to: 'two' })
    const off = planReload(current, parse({ ...current, defaultNetwork: false }))
    assert.deepEqual(off.moved, { from: 'one', to: undefined })
    // from none, back to the first network: named too
    const offConfig = parse({ ...current, defaultNetwork: false })
    assert.throws(() => planReload(offConfig, parse({ networks: current.networks })), /serve no network/)
  })
})
