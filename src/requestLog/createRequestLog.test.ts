import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { until } from '../../test/helpers/until.ts'
import type { KeyEntry } from '../auth/createKeyRegistry.ts'
import { RateLimitError } from '../errors/limitErrors.ts'
import type { KeyRequest } from '../pipeline/authorizeKeyRequest.ts'
import { createRequestLog, type RequestLogOptions } from './createRequestLog.ts'
import type { RequestLogRow, RequestLogStore } from './requestLogStore.ts'

const key = { apiKey: { id: 1, account: { id: 1 } } } as unknown as KeyEntry
const request = { key, network: 'mainnet', keyRequest: {} as KeyRequest, startedMs: performance.now() }
const refusal = new RateLimitError('planCreditsPerSecond', 100)

/** A store that keeps what it is given, or refuses while `failing`. */
function memoryStore() {
  const written: RequestLogRow[][] = []
  let failing = false
  let prunes = 0
  const store: RequestLogStore = {
    async add(rows) {
      if (failing) throw new Error('database away')
      written.push([...rows])
    },
    read: async () => [],
    summarize: async () => ({ failures: [], latency: { sampledCalls: 0, p50Ms: null, p99Ms: null } }),
    async prune() {
      prunes++
      return 0
    },
  }
  return { store, written, setFailing: (value: boolean) => (failing = value), prunes: () => prunes }
}

function logWith(store: RequestLogStore, overrides: Partial<RequestLogOptions> = {}) {
  const errors: unknown[] = []
  const dropped: number[] = []
  const log = createRequestLog({
    store,
    sampleRate: 0,
    fullClientAddress: false,
    params: false,
    maxParamsChars: 64,
    days: 7,
    rowsPerAccount: 100,
    maxBufferedRows: 10,
    // no timer flush in these tests: each flush is asked for
    flushMs: 3_600_000,
    pruning: { held: () => true, onChange: () => () => {} },
    onError: (err) => errors.push(err),
    onDropped: (rows) => dropped.push(rows),
    ...overrides,
  })
  return { log, errors, dropped }
}

describe('createRequestLog', () => {
  it('holds at most maxBufferedRows: the rest are dropped and counted, never waited for', async () => {
    const memory = memoryStore()
    memory.setFailing(true)
    const { log, dropped, errors } = logWith(memory.store)
    for (let i = 0; i < 25; i++) log.refused(request, '(request)', refusal, 0)
    // the store is away: the flushes half a buffer asks for fail and keep their rows
    await log.flush().catch(() => {})
    assert.equal(log.dropped(), 15)
    assert.ok(errors.length >= 1)
    memory.setFailing(false)
    await log.flush()
    assert.deepEqual(dropped, [15])
    assert.equal(memory.written.flat().length, 10)
    await log.close()
  })

  it('writes in batches: half a buffer starts a flush; close writes the rest', async () => {
    const memory = memoryStore()
    const { log } = logWith(memory.store)
    for (let i = 0; i < 5; i++) log.refused(request, '(request)', refusal, 0)
    await log.flush()
    assert.equal(memory.written.length, 1)
    assert.equal(memory.written[0]?.length, 5)
    log.refused(request, '(request)', refusal, 0)
    await log.close()
    assert.equal(memory.written.flat().length, 6)
    assert.equal(log.dropped(), 0)
  })

  it('a row that cannot be made is reported and lost: the call is never failed by its log', async () => {
    const memory = memoryStore()
    const { log, errors } = logWith(memory.store, {
      random: () => {
        throw new Error('no draw')
      },
    })
    const answered = {
      payload: '{"jsonrpc":"2.0","id":1,"result":"0x1"}',
      httpStatus: 200,
      credits: 1,
      method: 'eth_blockNumber',
      isNotification: false,
      partner: false,
      errorHeaders: undefined,
      trail: undefined,
      error: undefined,
      endedMs: 0,
    }
    assert.doesNotThrow(() => log.calls(request, [], [answered]))
    assert.equal(errors.length, 1)
    assert.match(String(errors[0]), /no draw/)
    await log.close()
    assert.equal(memory.written.flat().length, 0)
  })

  it('prunes only where it holds the lease', async () => {
    const memory = memoryStore()
    let held = true
    let asked = 0
    const pruning = {
      held: () => {
        asked++
        return held
      },
      onChange: () => () => {},
    }
    const { log } = logWith(memory.store, { pruneMs: 5, pruning })
    await until(() => memory.prunes() >= 1, 'a prune while the lease is held')
    held = false
    const seen = memory.prunes()
    const askedBefore = asked
    // the lease is another's now: the timer asks again (three times), and nothing is pruned
    await until(() => asked >= askedBefore + 3, 'three more looks at the lease')
    assert.equal(memory.prunes(), seen)
    await log.close()
  })
})
