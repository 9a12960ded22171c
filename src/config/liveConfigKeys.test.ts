import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { getLiveKeyEffect, liveConfigKeys } from './liveConfigKeys.ts'

describe('liveConfigKeys', () => {
  it('docs/config.md "What a reload changes" is the table, row by row: its keys and when they apply', () => {
    const doc = readFileSync('docs/config.md', 'utf8')
    const section = doc.slice(doc.indexOf('## What a reload changes'), doc.indexOf('## Choosing the network'))
    const rows = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => {
        const [keys = '', applies = ''] = line.replace(/^\| /, '').replace(/ \|$/, '').split(' | ')
        return { keys: [...keys.matchAll(/`([^`]+)`/g)].map((match) => match[1]), applies }
      })
    assert.deepEqual(
      rows,
      liveConfigKeys.map(({ keys, applies }) => ({ keys, applies })),
    )
  })

  it('names what a reload does with a key and with any key under it; undefined for a restart-only key', () => {
    assert.equal(getLiveKeyEffect('plans.core.dailyCredits'), 'plans')
    assert.equal(getLiveKeyEffect('upstreams.hedge.samples'), 'every network')
    assert.equal(getLiveKeyEffect('auth.failureBurst'), 'auth')
    assert.equal(getLiveKeyEffect('defaultNetwork'), 'networks')
    assert.equal(getLiveKeyEffect('server.port'), undefined)
    assert.equal(getLiveKeyEffect('cache.shared.enabled'), undefined)
    assert.equal(getLiveKeyEffect('plansX'), undefined)
  })
})
