import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { composeStages, type Stages } from './composeStages.ts'

/** A log that keeps its warnings. */
function createLog() {
  const warned: unknown[] = []
  return { warned, warn: (fields: { err: unknown }) => void warned.push(fields.err) }
}

/**
 * Fake stages that write what happens to them in `events`: each start, and each close's beginning
 * and end (a close takes a turn of the event loop, so a close that began before another ended shows).
 */
function createFakeStages() {
  const events: string[] = []
  /** Whether each stage is running: started and not closed. */
  const running = new Map<string, boolean>()
  function stage(name: string, { closeFails = false } = {}) {
    return async () => {
      events.push(`start ${name}`)
      running.set(name, true)
      return {
        name,
        async close() {
          events.push(`close ${name}`)
          await new Promise((resolve) => setImmediate(resolve))
          running.set(name, false)
          events.push(`closed ${name}`)
          if (closeFails) throw new Error(`${name} would not close`)
        },
      }
    }
  }
  function failing(name: string) {
    return async (): Promise<never> => {
      events.push(`start ${name}`)
      throw new Error(`${name} failed`)
    }
  }
  const runningNow = () => [...running].filter(([, on]) => on).map(([name]) => name)
  return { events, stage, failing, runningNow }
}

describe('composeStages', () => {
  it('hands each stage what the earlier ones built, and closes them latest first, each after the next has closed', async () => {
    const log = createLog()
    const fake = createFakeStages()
    const app = await composeStages(log, async (stages) => {
      const stores = await stages.start(fake.stage('stores'))
      const meter = await stages.start(fake.stage(`meter on ${stores.name}`))
      const server = await stages.start(fake.stage(`server on ${meter.name}`))
      return { url: server.name }
    })
    assert.equal(app.url, 'server on meter on stores')
    assert.deepEqual(fake.runningNow(), ['stores', 'meter on stores', 'server on meter on stores'])
    await app.close()
    assert.deepEqual(fake.events, [
      'start stores',
      'start meter on stores',
      'start server on meter on stores',
      'close server on meter on stores',
      'closed server on meter on stores',
      'close meter on stores',
      'closed meter on stores',
      'close stores',
      'closed stores',
    ])
    assert.deepEqual(fake.runningNow(), [])
    assert.deepEqual(log.warned, [])
  })

  it('a stage that throws as it starts: the ones started before it are closed, latest first, none after it starts, and its error is thrown', async () => {
    const log = createLog()
    const fake = createFakeStages()
    await assert.rejects(
      composeStages(log, async (stages) => {
        await stages.start(fake.stage('stores'))
        await stages.start(fake.stage('meter'))
        await stages.start(fake.failing('networks'))
        await stages.start(fake.stage('server'))
        return {}
      }),
      { message: 'networks failed' },
    )
    assert.deepEqual(fake.events, [
      'start stores',
      'start meter',
      'start networks',
      'close meter',
      'closed meter',
      'close stores',
      'closed stores',
    ])
    assert.deepEqual(fake.runningNow(), [])
  })

  it('a build that throws between stages closes the ones it started', async () => {
    const fake = createFakeStages()
    await assert.rejects(
      composeStages(createLog(), async (stages) => {
        await stages.start(fake.stage('stores'))
        throw new Error('the database is in use')
      }),
      { message: 'the database is in use' },
    )
    assert.deepEqual(fake.events, ['start stores', 'close stores', 'closed stores'])
  })

  it('a close that throws does not stop the earlier stages closing; its error is thrown, later ones logged', async () => {
    const log = createLog()
    const fake = createFakeStages()
    const app = await composeStages(log, async (stages) => {
      await stages.start(fake.stage('stores'))
      await stages.start(fake.stage('meter', { closeFails: true }))
      await stages.start(fake.stage('networks', { closeFails: true }))
      return {}
    })
    await assert.rejects(app.close(), { message: 'networks would not close' })
    assert.deepEqual(fake.runningNow(), [])
    assert.deepEqual(
      log.warned.map((err) => (err as Error).message),
      ['meter would not close'],
    )
  })

  it('a failed start whose undoing fails too throws the start error and logs the close error', async () => {
    const log = createLog()
    const fake = createFakeStages()
    await assert.rejects(
      composeStages(log, async (stages) => {
        await stages.start(fake.stage('stores', { closeFails: true }))
        await stages.start(fake.failing('meter'))
        return {}
      }),
      { message: 'meter failed' },
    )
    assert.deepEqual(
      log.warned.map((err) => (err as Error).message),
      ['stores would not close'],
    )
  })

  it('closes once: a second close waits for the first and closes nothing again', async () => {
    const fake = createFakeStages()
    const app = await composeStages(createLog(), async (stages: Stages) => {
      await stages.start(fake.stage('stores'))
      return {}
    })
    await Promise.all([app.close(), app.close()])
    await app.close()
    assert.deepEqual(fake.events, ['start stores', 'close stores', 'closed stores'])
  })

  it('composes: a stage made of parts closes its parts, in reverse, in its place', async () => {
    const log = createLog()
    const fake = createFakeStages()
    const app = await composeStages(log, async (stages) => {
      await stages.start(fake.stage('stores'))
      await stages.start(() =>
        composeStages(log, async (parts) => {
          await parts.start(fake.stage('starter'))
          await parts.start(fake.stage('networks'))
          return {}
        }),
      )
      await stages.start(fake.stage('server'))
      return {}
    })
    await app.close()
    assert.deepEqual(
      fake.events.filter((event) => event.startsWith('close ')),
      ['close server', 'close networks', 'close starter', 'close stores'],
    )
  })
})
