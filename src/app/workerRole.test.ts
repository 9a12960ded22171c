import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import {
  NoWorkerSpecError,
  readWorkerSpec,
  type SpecMessage,
  type WorkerChannel,
  type WorkerSpec,
} from './workerRole.ts'

/** A cluster worker's channel to a primary that answers with `answer` (or never, when undefined). */
function channelOf(env: NodeJS.ProcessEnv, answer: WorkerSpec | undefined) {
  const sent: unknown[] = []
  const listeners = new Set<(message: SpecMessage | undefined) => void>()
  const channel: WorkerChannel = {
    isWorker: true,
    env,
    send: (message) => {
      sent.push(message)
      if (answer)
        queueMicrotask(() => {
          for (const listener of listeners) listener({ tollgate: 'spec', spec: answer })
        })
    },
    on: (_event, listener) => listeners.add(listener),
    off: (_event, listener) => listeners.delete(listener),
  }
  return { channel, sent, listeners }
}

const spec = { slot: 0 } as WorkerSpec

describe('readWorkerSpec', () => {
  it('a worker of another cluster supervisor (no marker) runs as one plain process: it asks nothing', async () => {
    const { channel, sent } = channelOf({}, spec)
    assert.equal(await readWorkerSpec(channel, createFakeTimers()), undefined)
    assert.deepEqual(sent, [])
  })

  it('not a cluster worker: nothing asked, even with the marker', async () => {
    const { channel, sent } = channelOf({ TOLLGATE_WORKER: '1' }, spec)
    assert.equal(await readWorkerSpec({ ...channel, isWorker: false }, createFakeTimers()), undefined)
    assert.deepEqual(sent, [])
  })

  it('a marked worker asks its primary, and takes the answer', async () => {
    const timers = createFakeTimers()
    const { channel, sent, listeners } = channelOf({ TOLLGATE_WORKER: '1' }, spec)
    assert.equal(await readWorkerSpec(channel, timers), spec)
    assert.deepEqual(sent, [{ tollgate: 'spec?' }])
    assert.equal(listeners.size, 0, 'it stops listening')
    assert.equal(timers.pending(), 0, 'the wait is cleared')
  })

  it('a marked worker whose primary never answers gives up after 10 s', async () => {
    const timers = createFakeTimers()
    const { channel, listeners } = channelOf({ TOLLGATE_WORKER: '1' }, undefined)
    const asked = readWorkerSpec(channel, timers)
    let settled = false
    asked.then(
      () => (settled = true),
      () => (settled = true),
    )
    await timers.advance(9_999)
    assert.equal(settled, false, 'still waiting before 10 s')
    await timers.advance(1)
    await assert.rejects(asked, (err: Error) => {
      assert.ok(err instanceof NoWorkerSpecError)
      assert.equal(err.message, 'no spec from the primary within 10 s')
      return true
    })
    assert.equal(listeners.size, 0)
  })
})
