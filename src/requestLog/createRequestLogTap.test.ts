import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KeyEntry } from '../auth/createKeyRegistry.ts'
import { RateLimitError } from '../errors/limitErrors.ts'
import { MethodNotFoundError } from '../errors/rpcErrors.ts'
import type { KeyRequest } from '../pipeline/authorizeKeyRequest.ts'
import type { CallOutcome } from '../pipeline/callOutcome.ts'
import type { PreparedCall } from '../pipeline/prepareCall.ts'
import type { LoggedRequest } from '../pipeline/requestLogTap.ts'
import { CallTrail } from '../upstreams/CallTrail.ts'
import type { Upstream } from '../upstreams/createUpstream.ts'
import { PoolMember } from '../upstreams/PoolMember.ts'
import {
  createRequestLogTap,
  maxUnprovenRowsPerMinute,
  type RequestLogSettings,
} from './createRequestLogTap.ts'
import type { RequestLogRow } from './requestLogStore.ts'

const key = { apiKey: { id: 7, key: 'k'.repeat(32), account: { id: 3 } } } as unknown as KeyEntry
const keyRequest = {
  clientAddress: '203.0.113.77',
  userAgent: `agent/${'x'.repeat(1000)}`,
} as unknown as KeyRequest
const request: LoggedRequest = { key, network: 'mainnet', keyRequest, startedMs: performance.now() }
const settings: RequestLogSettings = {
  sampleRate: 0.25,
  fullClientAddress: false,
  params: false,
  maxParamsChars: 32,
}

function outcome(fields: Partial<CallOutcome>): CallOutcome {
  return {
    payload: '{"jsonrpc":"2.0","id":1,"result":"0x1"}',
    httpStatus: 200,
    credits: 80,
    method: 'eth_blockNumber',
    isNotification: false,
    partner: false,
    errorHeaders: undefined,
    trail: undefined,
    error: undefined,
    endedMs: 0,
    ...fields,
  }
}
const call = { ok: true, call: { id: 1, params: ['0xabc', 'latest'] } } as unknown as PreparedCall

/** A tap whose draws are `draws`, in order, and the rows it keeps. */
function tapWith(draws: number[], overrides: Partial<RequestLogSettings> = {}) {
  const rows: RequestLogRow[] = []
  let drawn = 0
  const tap = createRequestLogTap(
    { ...settings, ...overrides },
    (row) => rows.push(row),
    () => {
      drawn++
      return draws.shift() ?? 0.99
    },
  )
  return { tap, rows, drawn: () => drawn }
}

describe('createRequestLogTap', () => {
  it('keeps a successful call when its draw falls under the sample rate, one draw per call', () => {
    const { tap, rows, drawn } = tapWith([0.1, 0.3, 0.2499, 0.25])
    tap.calls(request, [call, call, call, call], [outcome({}), outcome({}), outcome({}), outcome({})])
    assert.equal(drawn(), 4)
    assert.equal(rows.length, 2)
    assert.deepEqual(
      rows.map((row) => [row.outcome, row.status, row.code, row.error, row.credits]),
      [
        ['ok', 200, null, null, 80],
        ['ok', 200, null, null, 80],
      ],
    )
  })

  it('keeps every error and refusal whatever the draw: a refused call, a failure, a node error answer', () => {
    const { tap, rows } = tapWith([0.99, 0.99, 0.99], { sampleRate: 0 })
    tap.calls(
      request,
      [call, call, call],
      [
        outcome({
          error: new MethodNotFoundError('eth_nope'),
          httpStatus: 405,
          credits: 0,
          method: '(invalid)',
        }),
        outcome({ error: new RateLimitError('keyCreditsPerSecond', 500), httpStatus: 429, credits: 0 }),
        outcome({
          payload: Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"execution reverted"}}'),
        }),
      ],
    )
    assert.deepEqual(
      rows.map((row) => [row.outcome, row.status, row.code, row.error]),
      [
        ['error', 405, -32601, 'MethodNotFoundError'],
        ['refused', 429, 429, 'RateLimitError'],
        ['error', 200, 3, 'NodeError'],
      ],
    )
    assert.equal(rows[1]?.reason, "You have exceeded this key's own credits per second throughput limit.")
    assert.equal(rows[2]?.reason, 'execution reverted')
  })

  it('reads a node error answer of up to 64 KiB (a revert with long data), not a longer one', () => {
    const { tap, rows } = tapWith([0.99, 0.99], { sampleRate: 0 })
    const revert = (dataBytes: number) =>
      Buffer.from(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          error: { code: 3, message: 'execution reverted', data: `0x${'ab'.repeat(dataBytes)}` },
        }),
      )
    tap.calls(
      request,
      [call, call],
      [outcome({ payload: revert(10_000) }), outcome({ payload: revert(40_000) })],
    )
    assert.deepEqual(
      rows.map((row) => [row.outcome, row.code, row.reason]),
      [['error', 3, 'execution reverted']],
    )
  })

  it("keeps at most 64 characters of a network the request's path named", () => {
    const { tap, rows } = tapWith([])
    const named = { ...request, network: `n${'x'.repeat(10_000)}` }
    tap.refused(named, '(request)', new RateLimitError('planCreditsPerSecond', 100), 0)
    assert.equal(rows[0]?.network, `n${'x'.repeat(63)}`)
  })

  it('refusals at the door: at most 30 rows a key and minute, then one row says how many were left out', () => {
    let nowMs = Date.UTC(2026, 10, 29, 12)
    const rows: RequestLogRow[] = []
    const tap = createRequestLogTap(
      settings,
      (row) => rows.push(row),
      Math.random,
      () => nowMs,
    )
    const other: LoggedRequest = {
      ...request,
      key: { apiKey: { id: 8, key: 'o'.repeat(32), account: { id: 3 } } } as unknown as KeyEntry,
    }
    const wrongSecret = new RateLimitError('planCreditsPerSecond', 100)
    for (let i = 0; i < maxUnprovenRowsPerMinute + 12; i++) tap.refusedAtTheDoor(request, wrongSecret)
    tap.refusedAtTheDoor(other, wrongSecret)
    assert.equal(rows.length, maxUnprovenRowsPerMinute + 1)
    assert.equal(rows.filter((row) => row.keyId === 8).length, 1)
    nowMs += 60_000
    tap.refusedAtTheDoor(request, wrongSecret)
    const [note, next] = rows.slice(-2)
    assert.deepEqual(
      [note?.keyId, note?.method, note?.outcome, note?.error],
      [7, '(request)', 'refused', 'RefusalsLeftOutError'],
    )
    assert.match(note?.reason ?? '', /^12 more requests refused/)
    assert.equal(note?.timeMs, nowMs)
    assert.equal(next?.error, 'RateLimitError')
  })

  it("each call of a batch takes its own time, from the request's arrival to its outcome", () => {
    const { tap, rows } = tapWith([0, 0, 0])
    const arrived: LoggedRequest = { ...request, startedMs: 1_000 }
    tap.calls(
      arrived,
      [call, call, call],
      [
        outcome({ endedMs: 1_250.4 }),
        outcome({ endedMs: 1_003.6 }),
        outcome({ error: new MethodNotFoundError('eth_nope'), method: '(invalid)', endedMs: 1_000.2 }),
      ],
    )
    assert.deepEqual(
      rows.map((row) => row.durationMs),
      [250, 4, 0],
    )
  })

  it('a refusal of the whole request is one row', () => {
    const { tap, rows } = tapWith([])
    tap.refused(request, '(batch)', new RateLimitError('planCreditsPerSecond', 100), 0)
    assert.equal(rows.length, 1)
    assert.equal(rows[0]?.method, '(batch)')
    assert.equal(rows[0]?.outcome, 'refused')
    assert.equal(rows[0]?.status, 429)
  })

  it('cuts the address and the user agent, names the upstream (never its URL), keeps no params', () => {
    const { tap, rows } = tapWith([0, 0])
    // the pool's own members: one named in the config, one not (both with a secret in their URL)
    const trails = [{ name: 'alpha' }, { name: undefined }].map(({ name }, priority) => {
      const url = `https://secret.example/KEY${priority}`
      const member = new PoolMember({ name, label: url } as Upstream, priority, {
        breaker: { failures: 1, cooldownMs: 1_000, maxCooldownMs: 1_000, now: () => 0 },
        latencySamples: 1,
        onChange: () => {},
        checkLiveness: async () => true,
      })
      const trail = new CallTrail(undefined)
      const { attempt } = trail.begin(member, false)
      trail.end(attempt, { answer: Buffer.from('') })
      trail.usedCache('miss')
      return trail
    })
    tap.calls(
      request,
      [call, call],
      trails.map((trail) => outcome({ trail })),
    )
    const row = rows[0] as RequestLogRow
    assert.equal(row.clientAddress, '203.0.113.0/24')
    assert.equal(row.userAgent?.length, 256)
    assert.deepEqual(
      rows.map((each) => each.upstream),
      ['alpha', '#2'],
    )
    assert.equal(row.cacheHit, false)
    assert.equal(row.params, null)
    assert.equal(row.answer, null)
    assert.equal(row.accountId, 3)
    assert.equal(row.keyId, 7)
    assert.ok(!JSON.stringify(rows).includes('secret.example'))
  })

  it('keeps the whole address and cut params and answer when the operator says so', () => {
    const { tap, rows } = tapWith([0], { fullClientAddress: true, params: true, maxParamsChars: 16 })
    tap.calls(request, [call], [outcome({})])
    const row = rows[0] as RequestLogRow
    assert.equal(row.clientAddress, '203.0.113.77')
    assert.equal(row.params, '["0xabc","latest…')
    assert.equal(row.answer, '{"jsonrpc":"2.0"…')
  })
})
