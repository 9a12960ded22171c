import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createNetworkRegistry } from '../networks/createNetworkRegistry.ts'
import { createReadiness } from './createReadiness.ts'

const networks = createNetworkRegistry([], undefined)
const body = (database: string) => ({
  status: database === 'open' ? 'ready' : 'not ready',
  reasons: database === 'open' ? [] : ['database unavailable'],
  database,
  networks: [],
})

describe('createReadiness', () => {
  it('is open or unavailable as the database answers', async () => {
    let up = true
    const ready = createReadiness({ networks, databaseUp: async () => up })
    assert.deepEqual(await ready(), { ok: true, body: body('open') })
    up = false
    assert.deepEqual(await ready(), { ok: false, body: body('unavailable') })
  })

  it('names each reason it is not ready: the credit bank only when calls need it, draining', async () => {
    let bankUp = false
    let draining = false
    const open = createReadiness({
      networks,
      databaseUp: async () => true,
      bankUp: () => bankUp,
      onBankDown: 'open',
    })
    assert.deepEqual((await open()).body, {
      status: 'ready',
      reasons: [],
      database: 'open',
      creditBank: 'away',
      networks: [],
    })
    const closed = createReadiness({
      networks,
      databaseUp: async () => false,
      bankUp: () => bankUp,
      onBankDown: 'closed',
      draining: () => draining,
    })
    draining = true
    assert.deepEqual(await closed(), {
      ok: false,
      body: {
        status: 'not ready',
        reasons: ['database unavailable', 'credit bank unreachable', 'draining'],
        database: 'unavailable',
        creditBank: 'away',
        networks: [],
      },
    })
    bankUp = true
    draining = false
    assert.deepEqual((await closed()).body, { ...body('unavailable'), creditBank: 'up' })
  })
})
