import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createNetworkRegistry } from '../networks/createNetworkRegistry.ts'
import { createReadiness } from './createReadiness.ts'

const networks = createNetworkRegistry([])
const body = (database: string) => ({
  status: database === 'open' ? 'ready' : 'not ready',
  database,
  networks: [],
})

describe('createReadiness', () => {
  it('asks a database that answers at once on every call', () => {
    let up = true
    const ready = createReadiness({ networks, pingDatabase: () => up })
    assert.deepEqual(ready(), { ok: true, body: body('open') })
    up = false
    assert.deepEqual(ready(), { ok: false, body: body('unavailable') })
  })

  it('a ping that throws is an unavailable database', () => {
    const ready = createReadiness({
      networks,
      pingDatabase: () => {
        throw new Error('closed')
      },
    })
    assert.deepEqual(ready(), { ok: false, body: body('unavailable') })
  })

  it('shows an asynchronous database as its last completed ping, one ping at a time', async () => {
    const pings: ((up: boolean) => void)[] = []
    const ready = createReadiness({
      networks,
      pingDatabase: () => new Promise<boolean>((resolve) => pings.push(resolve)),
    })
    assert.equal(ready().ok, false)
    assert.equal(ready().ok, false)
    assert.equal(pings.length, 1)
    pings[0]?.(true)
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(ready(), { ok: true, body: body('open') })
    assert.equal(pings.length, 2)
    pings[1]?.(false)
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(ready().ok, false)
  })

  it('a database that answers at once, then asynchronously, is shown as its last answer in between', async () => {
    let answer: boolean | Promise<boolean> = true
    const ready = createReadiness({ networks, pingDatabase: () => answer })
    assert.equal(ready().ok, true)
    let resolve: (up: boolean) => void = () => {}
    answer = new Promise<boolean>((settle) => {
      resolve = settle
    })
    assert.equal(ready().ok, true, 'the last answer while the ping is out')
    resolve(false)
    await new Promise((settle) => setImmediate(settle))
    assert.equal(ready().ok, false)
  })
})
