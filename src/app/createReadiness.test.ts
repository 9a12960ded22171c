import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createNetworkRegistry } from '../networks/createNetworkRegistry.ts'
import { createReadiness } from './createReadiness.ts'

const networks = createNetworkRegistry([])
const body = (database: string) => ({
  status: database === 'open' ? 'ready' : 'not ready',
  reasons: database === 'open' ? [] : ['database unavailable'],
  database,
  networks: [],
})

describe('createReadiness', () => {
  it('asks the database on every probe when no ping is out', async () => {
    let up = true
    const ready = createReadiness({ networks, pingDatabase: async () => up })
    assert.deepEqual(await ready(), { ok: true, body: body('open') })
    up = false
    assert.deepEqual(await ready(), { ok: false, body: body('unavailable') })
  })

  it('a ping that fails is an unavailable database', async () => {
    const ready = createReadiness({
      networks,
      pingDatabase: async () => {
        throw new Error('closed')
      },
    })
    assert.deepEqual(await ready(), { ok: false, body: body('unavailable') })
  })

  it('one ping at a time: a probe while one is out is shown the last answer, the one that asked waits for it', async () => {
    const pings: ((up: boolean) => void)[] = []
    const ready = createReadiness({
      networks,
      pingDatabase: () => new Promise<boolean>((resolve) => pings.push(resolve)),
    })
    const first = ready()
    assert.equal((await ready()).ok, false, 'no answer yet: unavailable')
    assert.equal(pings.length, 1)
    pings[0]?.(true)
    assert.deepEqual(await first, { ok: true, body: body('open') })
    const second = ready()
    assert.equal(pings.length, 2)
    assert.equal((await ready()).ok, true, 'the last answer while the ping is out')
    pings[1]?.(false)
    assert.equal((await second).ok, false)
  })

  it('a probe waits for a slow database at most half a second, then is shown the last answer', async () => {
    const pending: (() => void)[] = []
    const timers = {
      setTimeout: (callback: () => void, ms: number) => {
        assert.equal(ms, 500)
        pending.push(callback)
        return pending.length
      },
      clearTimeout: () => {},
    }
    let answer: ((up: boolean) => void) | undefined
    const ready = createReadiness(
      { networks, pingDatabase: () => new Promise<boolean>((resolve) => (answer = resolve)) },
      timers,
    )
    const probe = ready()
    assert.equal(pending.length, 1, 'the wait is bounded')
    pending[0]?.()
    assert.deepEqual(await probe, { ok: false, body: body('unavailable') }, 'no answer yet')
    answer?.(true)
    await new Promise(setImmediate) // the late answer taken in
    const second = ready()
    assert.equal(pending.length, 2, 'the next probe asks again')
    assert.deepEqual(await ready(), { ok: true, body: body('open') }, 'meanwhile, the late answer')
    answer?.(false)
    assert.deepEqual(await second, { ok: false, body: body('unavailable') })
  })

  it('names each reason it is not ready: the credit bank only when calls need it, draining', async () => {
    let bankUp = false
    let draining = false
    const open = createReadiness({
      networks,
      pingDatabase: async () => true,
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
      pingDatabase: async () => false,
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
