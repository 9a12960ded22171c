import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
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

  it('one ping at a time: a call while one is out waits for that ping (a first /readyz after a scrape included)', async () => {
    const pings: ((up: boolean) => void)[] = []
    const databaseUp = createDatabaseProbe(() => new Promise<boolean>((resolve) => pings.push(resolve)))
    const scrape = databaseUp()
    const readyz = databaseUp()
    assert.equal(pings.length, 1)
    pings[0]?.(true)
    assert.deepEqual(await Promise.all([scrape, readyz]), [true, true], 'the same answer')
    const second = databaseUp()
    const third = databaseUp()
    assert.equal(pings.length, 2)
    pings[1]?.(false)
    assert.deepEqual(await Promise.all([second, third]), [false, false])
    assert.equal(pings.length, 2)
  })

  it('a ping that fails at once does not stick: the next call asks again', async () => {
    let pings = 0
    const databaseUp = createDatabaseProbe(() => {
      pings++
      if (pings === 1) throw new Error('closed')
      return Promise.resolve(true)
    })
    assert.equal(await databaseUp(), false)
    assert.equal(await databaseUp(), true)
    assert.equal(pings, 2)
  })

  it('a hanging ping stays the only one, however many calls come; each waits at most half a second', async () => {
    let pings = 0
    const timers = createFakeTimers()
    const databaseUp = createDatabaseProbe(() => {
      pings++
      return new Promise<boolean>(() => {})
    }, timers)
    const calls = Array.from({ length: 100 }, () => databaseUp())
    assert.equal(timers.pending(), 100, 'each call has its own cap')
    await timers.advance(499)
    let settled = 0
    for (const call of calls) void call.then(() => settled++)
    await timers.advance(0)
    assert.equal(settled, 0, 'still waiting before 0.5 s')
    await timers.advance(1)
    assert.deepEqual(new Set(await Promise.all(calls)), new Set([false]), 'the last answer: down')
    assert.equal(pings, 1)
  })

  it('a call waits for a slow database at most half a second, then is given the last answer', async () => {
    const timers = createFakeTimers()
    const answers: ((up: boolean) => void)[] = []
    const databaseUp = createDatabaseProbe(
      () => new Promise<boolean>((resolve) => answers.push(resolve)),
      timers,
    )
    const probe = databaseUp()
    await timers.advance(500)
    assert.equal(await probe, false, 'no answer yet: down')
    answers[0]?.(true)
    await timers.advance(0) // the late answer taken in
    const second = databaseUp()
    assert.equal(answers.length, 2, 'the next call asks again')
    await timers.advance(500)
    assert.equal(await second, true, 'tired of waiting: the late answer')
    const third = databaseUp()
    assert.equal(answers.length, 2, 'it waits on the ping still out')
    answers[1]?.(false)
    assert.equal(await third, false)
  })
})
