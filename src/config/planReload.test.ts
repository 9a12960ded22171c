import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { configSchema } from './configSchema.ts'
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
})
