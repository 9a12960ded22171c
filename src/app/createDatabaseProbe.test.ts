import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createDatabaseProbe } from './createDatabaseProbe.ts'

describe('createDatabaseProbe', () => {
  it('asks the database on every call when no ping is out', async () => {
    let up = true
    let pings = 0
    const databaseUp = createDatabaseProbe(async () => {
      pings++
      return up
    })
    assert.equal(await databaseUp(), true)
    up = false
    assert.equal(await databaseUp(), false)
    assert.equal(pings, 2)
  })

  it('a ping that fails is a database down', async () => {
    const databaseUp = createDatabaseProbe(async () => {
      throw new Error('closed')
    })
    assert.equal(await databaseUp(), false)
  })

  it('one ping at a time: a call while one is out is given the last answer, the one that asked waits for it', async () => {
    const pings: ((up: boolean) => void)[] = []
    const databaseUp = createDatabaseProbe(() => new Promise<boolean>((resolve) => pings.push(resolve)))
    const first = databaseUp()
    assert.equal(await databaseUp(), false, 'no answer yet: down')
    assert.equal(pings.length, 1)
    pings[0]?.(true)
    assert.equal(await first, true)
    const second = databaseUp()
    assert.equal(pings.length, 2)
    assert.equal(await databaseUp(), true, 'the last answer while the ping is out')
    assert.equal(pings.length, 2)
    pings[1]?.(false)
    assert.equal(await second, false)
  })

  it('a hanging ping stays the only one, however many calls come', async () => {
    let pings = 0
    const pending: (() => void)[] = []
    const timers = {
      setTimeout: (callback: () => void) => pending.push(callback),
      clearTimeout: () => {},
    }
    const databaseUp = createDatabaseProbe(() => {
      pings++
      return new Promise<boolean>(() => {})
    }, timers)
    const waiting = databaseUp()
    for (let i = 0; i < 100; i++) assert.equal(await databaseUp(), false)
    pending[0]?.()
    assert.equal(await waiting, false)
    assert.equal(pings, 1)
  })

  it('a call waits for a slow database at most half a second, then is given the last answer', async () => {
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
    const databaseUp = createDatabaseProbe(
      () => new Promise<boolean>((resolve) => (answer = resolve)),
      timers,
    )
    const probe = databaseUp()
    assert.equal(pending.length, 1, 'the wait is bounded')
    pending[0]?.()
    assert.equal(await probe, false, 'no answer yet')
    answer?.(true)
    await new Promise(setImmediate) // the late answer taken in
    const second = databaseUp()
    assert.equal(pending.length, 2, 'the next call asks again')
    assert.equal(await databaseUp(), true, 'meanwhile, the late answer')
    answer?.(false)
    assert.equal(await second, false)
  })
})
