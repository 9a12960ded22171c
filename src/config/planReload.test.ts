import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
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

  it('docs/config.md lists exactly the keys a reload applies: every other key is refused', () => {
    const doc = readFileSync('docs/config.md', 'utf8')
    const section = doc.slice(doc.indexOf('## What a reload changes'), doc.indexOf('## Choosing the network'))
    const documented = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([^`]+)`/g)].map((match) => match[1]))
    assert.ok(documented.length > 10)
    // every key set, optional ones included
    const base = parse({
      redis: { url: 'redis://r.example' },
      devnet: {},
      admin: { token: 'a'.repeat(16) },
      metrics: { token: 'm'.repeat(16) },
      failover: { methods: ['eth_call'] },
      metering: { spoolDir: './spool' },
      networks: [network('main', 'http://a.example')],
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
      const live = documented.some((key) => name === key || name.startsWith(`${key}.`))
      assert.deepEqual([plan.changed, plan.refused], live ? [[name], []] : [[], [name]], name)
    }
  })
})
