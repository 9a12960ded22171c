import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CallTrail } from '../upstreams/CallTrail.ts'
import type { Upstream } from '../upstreams/createUpstream.ts'
import { PoolMember } from '../upstreams/PoolMember.ts'
import { routeHeaders } from './routeHeaders.ts'

/** A pool member whose upstream is never called, named `name` (or not), at `priority` in its config. */
const member = (name: string | undefined, priority: number) =>
  new PoolMember({ name, label: `https://secret@node-${priority}.example/key` } as Upstream, priority, {
    breaker: { failures: 1, cooldownMs: 1_000, maxCooldownMs: 1_000, now: () => 0 },
    latencySamples: 1,
    onChange: () => {},
    checkLiveness: async () => true,
  })

function headersOf(trails: (CallTrail | undefined)[]): Record<string, string> {
  const list = routeHeaders(trails)
  const headers: Record<string, string> = {}
  for (let index = 0; index < list.length; index += 2)
    headers[list[index] as string] = list[index + 1] as string
  return headers
}

describe('routeHeaders', () => {
  it('names the answering upstream and each attempt, hedges marked, unnamed ones by place, never a URL', () => {
    const trail = new CallTrail(undefined)
    const first = trail.begin(member('node a', 0), false)
    trail.end(first.attempt, { reason: 'no answer within 500 ms', blame: 'down', timedOut: true })
    const hedge = trail.begin(member(undefined, 1), true)
    trail.end(hedge.attempt, { answer: Buffer.from('{}') })
    trail.usedCache('miss')
    assert.deepEqual(headersOf([trail]), {
      'x-tollgate-upstream': '#2',
      'x-tollgate-attempts': 'node_a=timeout +#2=ok',
      'x-tollgate-cache': 'miss',
    })
  })

  it('names partners only as partner', () => {
    const trail = new CallTrail(undefined)
    trail.toPartners()
    const { attempt } = trail.begin(member('acme-rpc', 0), false)
    trail.end(attempt, { answer: Buffer.from('{}') })
    assert.equal(headersOf([trail])['x-tollgate-upstream'], 'partner')
  })

  it('lists a batch in call order, `-` for a call refused before it ran, and caps a long list', () => {
    const served = new CallTrail(undefined)
    assert.deepEqual(headersOf([served, undefined]), {
      'x-tollgate-upstream': '-, -',
      'x-tollgate-attempts': '-, -',
      'x-tollgate-cache': 'none, -',
    })
    const many = headersOf(Array.from({ length: 2000 }, () => served))
    for (const value of Object.values(many)) {
      assert.ok(value.length <= 4096, `${value.length}`)
      assert.ok(value.endsWith(', ...'))
    }
  })

  it('caps one call longer than the cap too (long upstream names)', () => {
    const trail = new CallTrail(undefined)
    for (const priority of [0, 1]) {
      const { attempt } = trail.begin(member('n'.repeat(3000), priority), false)
      trail.end(attempt, { reason: 'refused', blame: 'down', timedOut: false })
    }
    const attempts = headersOf([trail, trail])['x-tollgate-attempts'] ?? ''
    assert.equal(attempts.length, 4096)
    assert.ok(attempts.startsWith(`${'n'.repeat(3000)}=error n`))
    assert.ok(attempts.endsWith('...'))
  })
})
