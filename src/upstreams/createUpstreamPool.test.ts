import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { keccak256 } from 'viem'
import { createFakeTimers, type FakeTimers } from '../../test/helpers/createFakeTimers.ts'
import { until } from '../../test/helpers/until.ts'
import { ClientGoneError, NodeErrorAnswer } from '../errors/callEndings.ts'
import {
  ReceiptNotReadyError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../errors/upstreamErrors.ts'
import { Cancellation } from '../failsafe/Cancellation.ts'
import type { AttemptOutcome } from './AttemptDurations.ts'
import { CallTrail } from './CallTrail.ts'
import { latestBlockBody } from './createHealthProber.ts'
import type { PostOptions, Upstream, UpstreamResponse } from './createUpstream.ts'
import { createUpstreamPool, type UpstreamPool, type UpstreamPoolOptions } from './createUpstreamPool.ts'
import type { PoolMember } from './PoolMember.ts'

/**
 * What a stub does with one call: answer (with its label as the result), answer an HTTP status,
 * answer bytes that are not JSON, refuse the connection, hang until aborted, or sit queued for a
 * connection (never started, never settled: what undici does while every connection is busy).
 */
type Behaviour =
  | 'answer'
  | 500
  | 429
  | 413
  | 'garbage'
  | 'refused'
  | 'hang'
  | 'queued'
  /** Answers (with its label) when the test calls `release()`, unless aborted first. */
  | 'held'
  /** The connection drops after the request was sent (the node may have seen it). */
  | 'reset'
  /** Answers this JSON-RPC error object (HTTP 200). */
  | { error: { code: number; message: string } }
  /** Answers this JSON-RPC body for the request body. */
  | { respond: (body: string) => string }

type StubUpstream = Upstream & {
  /** Behaviours for the next calls, in order; then `behaviour`. */
  script: Behaviour[]
  behaviour: Behaviour
  /** What it does with the pool's liveness checks (the latest block): `behaviour` unless set; never the script. */
  liveness: Behaviour | undefined
  calls: number
  /** Liveness checks asked of it (not in `calls`). */
  checks: number
  aborts: number
  closed: boolean
  /** Answers the calls held so far. */
  release(): void
}

function stubUpstream(label: string, behaviour: Behaviour = 'answer'): StubUpstream {
  const held: (() => void)[] = []
  const stub: StubUpstream = {
    label,
    script: [],
    behaviour,
    liveness: undefined,
    calls: 0,
    checks: 0,
    aborts: 0,
    closed: false,
    release() {
      for (const answer of held.splice(0)) answer()
    },
    post(_body: string, { onStart }: PostOptions = {}) {
      const check = _body === latestBlockBody
      if (check) stub.checks++
      else stub.calls++
      const now = check ? (stub.liveness ?? stub.behaviour) : (stub.script.shift() ?? stub.behaviour)
      return new Promise<UpstreamResponse>((resolve, reject) => {
        if (now === 'queued') return
        let settled = false
        const settle = (fn: () => void) => {
          if (settled) return
          settled = true
          fn()
        }
        onStart?.((reason) => {
          if (settled) return
          stub.aborts++
          settle(() => reject(reason))
        })
        if (now === 'hang') return
        if (now === 'held') {
          held.push(() =>
            settle(() =>
              resolve({ status: 200, body: Buffer.from(`{"jsonrpc":"2.0","id":1,"result":"${label}"}`) }),
            ),
          )
          return
        }
        setImmediate(() =>
          settle(() => {
            if (now === 'refused') {
              reject(Object.assign(new Error(`connect ECONNREFUSED ${label}`), { code: 'ECONNREFUSED' }))
            } else if (now === 'reset') {
              reject(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }))
            } else if (typeof now === 'object' && 'error' in now) {
              resolve({
                status: 200,
                body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, error: now.error })),
              })
            } else if (typeof now === 'object') {
              resolve({ status: 200, body: Buffer.from(now.respond(_body)) })
            } else if (now === 'garbage')
              resolve({ status: 200, body: Buffer.from('<html>bad gateway</html>') })
            else if (typeof now === 'number') resolve({ status: now, body: Buffer.from('{"error":"busy"}') })
            else resolve({ status: 200, body: Buffer.from(`{"jsonrpc":"2.0","id":1,"result":"${label}"}`) })
          }),
        )
      })
    },
    dispatch(body, options, done) {
      stub.post(body, options).then(
        (response) => done({ response }),
        (error: Error) => done({ error }),
      )
    },
    async close() {
      stub.closed = true
    },
  }
  return stub
}

const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'

const defaults: UpstreamPoolOptions = {
  timeoutMs: 500,
  attemptTimeoutMs: 100,
  maxAttempts: 3,
  maxLagBlocks: 2,
  breakerFailures: 3,
  breakerCooldownMs: 1000,
  breakerMaxCooldownMs: 8000,
}

/**
 * A pool over stubs, with a clock the test moves (unless `realClock`); with `fakeTimers`, its
 * timers (attempt timeouts, pauses, hedges) run on a fake clock too (onFakeClock moves it).
 */
function setup(
  behaviours: Behaviour[],
  options: Partial<UpstreamPoolOptions> & { realClock?: boolean; fakeTimers?: boolean } = {},
) {
  const stubs = behaviours.map((behaviour, index) => stubUpstream(String.fromCharCode(97 + index), behaviour))
  const clock = { time: 1000 }
  const timers = createFakeTimers()
  const { realClock, fakeTimers, ...rest } = options
  const pool = createUpstreamPool(stubs, {
    ...defaults,
    ...(fakeTimers ? { now: timers.now, timers } : realClock ? {} : { now: () => clock.time }),
    ...rest,
  })
  const member = (index: number) => pool.members[index] as PoolMember
  return { pool, stubs, clock, member, timers }
}

/**
 * Runs a call on a fake clock: moves it 1 ms at a time (letting the stubs' answers in between) until
 * the call settles, and says at what time on that clock it did. Nothing here reads the wall clock.
 */
async function onFakeClock<T>(
  timers: FakeTimers,
  call: Promise<T>,
  limitMs = 10_000,
): Promise<{ ms: number; outcome: T | Error }> {
  const start = timers.now()
  let settledAt: number | undefined
  const outcome = call.catch((err: Error) => err)
  void outcome.then(() => {
    settledAt = timers.now()
  })
  while (settledAt === undefined && timers.now() - start < limitMs) {
    await timers.advance(1)
    await new Promise((resolve) => setImmediate(resolve))
  }
  return { ms: (settledAt ?? Number.NaN) - start, outcome: await outcome }
}

/** Which upstream answered: the stubs answer with their label. */
async function answeredBy(pool: UpstreamPool, options: Parameters<UpstreamPool['send']>[1] = {}) {
  const answer = JSON.parse((await pool.send(body, options)).toString()) as { result: string }
  return answer.result
}

describe('createUpstreamPool', () => {
  it('sends every call to the best member: the first in config order', async () => {
    const { pool, stubs, member } = setup(['answer', 'answer', 'answer'])
    for (let i = 0; i < 5; i++) assert.equal(await answeredBy(pool, { retry: true }), 'a')
    assert.deepEqual(
      stubs.map((stub) => stub.calls),
      [5, 0, 0],
    )
    assert.equal(member(0).requests, 5)
    assert.equal(member(0).failures, 0)
    const { latencyMs } = member(0)
    assert.ok(latencyMs !== undefined && latencyMs >= 0)
  })

  describe('retries', () => {
    for (const failure of [500, 429, 'garbage', 'refused'] as const) {
      it(`with retry, a member that fails (${failure}) is passed over within the call`, async () => {
        const { pool, stubs, member } = setup([failure, 'answer', 'answer'])
        assert.equal(await answeredBy(pool, { retry: true }), 'b')
        assert.deepEqual(
          stubs.map((stub) => stub.calls),
          [1, 1, 0],
        )
        assert.deepEqual([member(0).failures, member(0).breaker.consecutiveFailures], [1, 1])
        assert.ok(member(0).lastError)
        assert.deepEqual([member(1).failures, member(1).requests], [0, 1])
      })
    }

    it('with retry, attempts stop at maxAttempts', async () => {
      const { pool, stubs } = setup([500, 500, 500, 'answer'], { maxAttempts: 2 })
      await assert.rejects(pool.send(body, { retry: true }), UpstreamUnavailableError)
      assert.deepEqual(
        stubs.map((stub) => stub.calls),
        [1, 1, 0, 0],
      )
    })

    it('with retry and one member, a transient failure is retried on it after a pause', async () => {
      const { pool, stubs } = setup([500])
      stubs[0]?.script.push(500)
      const sa = stubs[0] as StubUpstream
      sa.behaviour = 'answer'
      assert.equal(await answeredBy(pool, { retry: true }), 'a')
      assert.equal(sa.calls, 2)
    })

    for (const failure of [500, 429, 'garbage', 'hang'] as const) {
      it(`without retry, one attempt only (${failure})`, async () => {
        // only a hang waits for the deadline: a failure must not meet it on a busy machine
        const timeoutMs = failure === 'hang' ? 60 : 10_000
        const { pool, stubs } = setup([failure, 'answer'], { realClock: true, timeoutMs })
        await assert.rejects(
          pool.send(body, { retry: false }),
          failure === 'hang' ? UpstreamTimeoutError : UpstreamUnavailableError,
        )
        assert.deepEqual(
          stubs.map((stub) => stub.calls),
          [1, 0],
        )
      })
    }

    it('without retry, a refused connection (never sent) moves on to an untried member', async () => {
      const { pool, stubs } = setup(['refused', 'refused', 'answer'])
      assert.equal(await answeredBy(pool, { retry: false }), 'c')
      assert.deepEqual(
        stubs.map((stub) => stub.calls),
        [1, 1, 1],
      )
      // every member refused: each is tried once, then the call fails
      const all = setup(['refused', 'refused'])
      await assert.rejects(all.pool.send(body), UpstreamUnavailableError)
      assert.deepEqual(
        all.stubs.map((stub) => stub.calls),
        [1, 1],
      )
    })

    it('without retry, a refusal then a failure that reached the node stops there', async () => {
      const { pool, stubs } = setup(['refused', 500, 'answer'])
      await assert.rejects(pool.send(body), UpstreamUnavailableError)
      assert.deepEqual(
        stubs.map((stub) => stub.calls),
        [1, 1, 0],
      )
    })

    it('the failure reasons are in the error details', async () => {
      const { pool } = setup([500, 'refused'])
      const err = await pool.send(body, { retry: true }).catch((error: unknown) => error)
      assert.ok(err instanceof UpstreamUnavailableError)
      assert.match(err.logDetails ?? '', /a: HTTP 500/)
      assert.match(err.logDetails ?? '', /b: connect ECONNREFUSED/)
    })

    it('a call no member took (every one out of use) says why each is out', async () => {
      const { pool, member } = setup([500], { breakerFailures: 1 })
      await assert.rejects(pool.send(body), UpstreamUnavailableError)
      assert.equal(member(0).breaker.state, 'open')
      const err = await pool.send(body).catch((error: unknown) => error)
      assert.ok(err instanceof UpstreamUnavailableError)
      assert.equal(err.logDetails, 'no upstream took the call (a: HTTP 500)')
    })
  })

  describe('circuit breaker', () => {
    it('opens after breakerFailures consecutive failures; an open member gets no calls', async () => {
      const { pool, stubs, member } = setup([500, 'answer'], { breakerFailures: 3 })
      for (let i = 0; i < 2; i++) await assert.rejects(pool.send(body), UpstreamUnavailableError)
      assert.equal(member(0).breaker.state, 'closed')
      await assert.rejects(pool.send(body), UpstreamUnavailableError)
      assert.equal(member(0).breaker.state, 'open')
      assert.equal(pool.isReachable(), true)
      for (let i = 0; i < 3; i++) assert.equal(await answeredBy(pool), 'b')
      assert.deepEqual(
        stubs.map((stub) => stub.calls),
        [3, 3],
      )
    })

    it('a refusal of the request itself (400, 413) is not held against the member', async () => {
      const { pool, member } = setup([413, 'answer'], { breakerFailures: 2 })
      for (let i = 0; i < 5; i++) assert.equal(await answeredBy(pool, { retry: true }), 'b')
      assert.deepEqual([member(0).breaker.state, member(0).errorRate, member(0).failures], ['closed', 0, 0])
      // 401/403 (our credentials) and 429 (load) do count
      const other = setup([429, 'answer'], { breakerFailures: 2 })
      for (let i = 0; i < 2; i++) await other.pool.send(body, { retry: true })
      assert.equal(other.member(0).breaker.state, 'open')
    })

    it('a success between failures resets the count', async () => {
      const { pool, stubs, member } = setup([500, 'answer'], { breakerFailures: 3 })
      const sa = stubs[0] as StubUpstream
      sa.script.push(500, 500, 'answer', 500, 500)
      for (const expected of [false, false, true, false, false]) {
        const ok = await pool.send(body).then(
          () => true,
          () => false,
        )
        assert.equal(ok, expected)
      }
      assert.equal(member(0).breaker.state, 'closed')
      assert.equal(member(0).breaker.consecutiveFailures, 2)
    })

    it('with every member open a call fails at once, asking no one', async () => {
      const { pool, stubs, timers } = setup(['hang', 500], { breakerFailures: 1, fakeTimers: true })
      // open both (the hanging one by a timed-out attempt, once its liveness check goes unanswered too)
      const opening = await onFakeClock(timers, pool.send(body, { retry: true }))
      assert.ok(opening.outcome instanceof UpstreamUnavailableError, String(opening.outcome))
      assert.equal(pool.members[0]?.breaker.state, 'closed', 'its silence waits for its liveness check')
      await timers.advance(defaults.attemptTimeoutMs)
      assert.deepEqual(
        pool.members.map((each) => each.breaker.state),
        ['open', 'open'],
      )
      assert.equal(pool.isReachable(), false)
      const { ms, outcome } = await onFakeClock(timers, pool.send(body, { retry: true, headSensitive: true }))
      assert.ok(outcome instanceof UpstreamUnavailableError, String(outcome))
      assert.equal(ms, 0)
      assert.deepEqual(
        stubs.map((stub) => stub.calls),
        [1, 1],
      )
    })

    it('after the cooldown one call probes an open member; a success closes it', async () => {
      const { pool, stubs, clock, member } = setup([500], { breakerFailures: 1, breakerCooldownMs: 1000 })
      const sa = stubs[0] as StubUpstream
      await assert.rejects(pool.send(body), UpstreamUnavailableError)
      assert.equal(member(0).breaker.state, 'open')
      clock.time += 999
      await assert.rejects(pool.send(body), UpstreamUnavailableError)
      assert.equal(sa.calls, 1)
      clock.time += 1
      sa.behaviour = 'answer'
      assert.equal(await answeredBy(pool), 'a')
      assert.equal(sa.calls, 2)
      assert.equal(member(0).breaker.state, 'closed')
      assert.equal(member(0).lastError, undefined)
      assert.equal(await answeredBy(pool), 'a')
    })

    it('a failed probe keeps it open and doubles its cooldown, up to the maximum', async () => {
      const { pool, stubs, clock, member } = setup([500], {
        breakerFailures: 1,
        breakerCooldownMs: 1000,
        breakerMaxCooldownMs: 3000,
      })
      await assert.rejects(pool.send(body), UpstreamUnavailableError)
      for (const cooldownMs of [2000, 3000, 3000]) {
        clock.time = member(0).breaker.retryAt
        await assert.rejects(pool.send(body), UpstreamUnavailableError)
        assert.equal(member(0).breaker.state, 'open')
        assert.equal(member(0).breaker.cooldownMs, cooldownMs)
        assert.equal(member(0).breaker.retryAt, clock.time + cooldownMs)
      }
      assert.equal((stubs[0] as StubUpstream).calls, 4)
    })

    it('only one call probes an open member per cooldown', async () => {
      const { pool, stubs, clock } = setup([500], { breakerFailures: 1, attemptTimeoutMs: 30 })
      const sa = stubs[0] as StubUpstream
      await assert.rejects(pool.send(body), UpstreamUnavailableError)
      clock.time += defaults.breakerCooldownMs
      sa.behaviour = 'hang'
      const probe = pool.send(body, { fallback: true })
      await assert.rejects(pool.send(body), UpstreamUnavailableError)
      await assert.rejects(probe, UpstreamUnavailableError)
      assert.equal(sa.calls, 2)
      // the probe's silence is a failed probe once its liveness check goes unanswered too
      await until(
        () => pool.members[0]?.breaker.cooldownMs === defaults.breakerCooldownMs * 2,
        'the cooldown doubled',
      )
      assert.equal(sa.checks, 1)
    })

    it('failures of calls begun before the breaker opened do not count as failed probes', async () => {
      const { pool, member } = setup([500], { breakerFailures: 2, breakerCooldownMs: 1000 })
      const calls = Array.from({ length: 6 }, () => pool.send(body))
      for (const call of calls) await assert.rejects(call, UpstreamUnavailableError)
      assert.equal(member(0).breaker.state, 'open')
      assert.equal(member(0).breaker.cooldownMs, 1000)
    })

    it('a health check answered closes an open member, one failed opens a closed one', async () => {
      const { pool, stubs, member } = setup([500, 'answer'], { breakerFailures: 1 })
      await assert.rejects(pool.send(body), UpstreamUnavailableError)
      assert.equal(member(0).breaker.state, 'open')
      ;(stubs[0] as StubUpstream).behaviour = 'answer'
      member(0).noteProbedHead(10n)
      assert.deepEqual(
        [member(0).breaker.state, member(0).head, member(0).breaker.consecutiveFailures],
        ['closed', 10n, 0],
      )
      assert.equal(await answeredBy(pool), 'a')

      member(0).noteProbeFailure('HTTP 502')
      assert.deepEqual([member(0).breaker.state, member(0).lastError], ['open', 'HTTP 502'])
      assert.equal(await answeredBy(pool), 'b')
      // a further failed probe of an open member changes nothing but the reason
      const { retryAt } = member(0).breaker
      member(0).noteProbeFailure('timeout')
      assert.deepEqual(
        [member(0).breaker.state, member(0).breaker.retryAt, member(0).lastError],
        ['open', retryAt, 'timeout'],
      )
    })

    it('error rates above one half put a member behind the others', async () => {
      const { pool, stubs, member } = setup([500, 'answer'], { breakerFailures: 1000 })
      let failures = 0
      while (member(0).errorRate <= 0.5) {
        await assert.rejects(pool.send(body), UpstreamUnavailableError)
        failures++
        assert.ok(failures < 100)
      }
      assert.equal(member(0).breaker.state, 'closed')
      assert.equal(await answeredBy(pool), 'b')
      // it gets no calls now, but passed head polls bring it back to the front
      ;(stubs[0] as StubUpstream).behaviour = 'answer'
      for (let poll = 0; member(0).errorRate > 0.5; poll++) {
        assert.ok(poll < 20)
        member(0).noteProbedHead(10n)
      }
      assert.equal(await answeredBy(pool), 'a')
      // the degraded member is still used when the others fail
      const degradedOnly = setup([500, 500], { breakerFailures: 1000 })
      while ((degradedOnly.pool.members[0] as PoolMember).errorRate <= 0.5) {
        await assert.rejects(degradedOnly.pool.send(body), UpstreamUnavailableError)
      }
      ;(degradedOnly.stubs[0] as StubUpstream).behaviour = 'answer'
      assert.equal(await answeredBy(degradedOnly.pool, { retry: true }), 'a')
    })
  })

  describe('time at the node', () => {
    it('a call the node had until its time ran out, while it answered others sent since, is slow by its nature: a 504 its key pays for, nothing held against the node', async () => {
      const { pool, stubs, member, timers } = setup(['answer'], {
        fakeTimers: true,
        timeoutMs: 100,
        breakerFailures: 1,
      })
      const sa = stubs[0] as StubUpstream
      sa.script.push('hang')
      const slow = pool.send(body, { retry: true })
      await timers.advance(10)
      assert.equal(await answeredBy(pool), 'a', 'another call, sent after the slow one began, answered')
      const { ms, outcome } = await onFakeClock(timers, slow)
      assert.ok(outcome instanceof UpstreamTimeoutError && outcome.nodeWorked, String(outcome))
      assert.equal(outcome.message, 'upstream request timed out: the node was still working on the call')
      assert.equal(ms, 90)
      assert.deepEqual(
        [member(0).breaker.state, member(0).failures, member(0).errorRate, sa.calls, sa.checks],
        ['closed', 0, 0, 2, 0],
      )
    })

    it('a health check answered meanwhile says the node was at work too', async () => {
      const { pool, member, timers } = setup(['hang'], { fakeTimers: true, timeoutMs: 100 })
      const slow = pool.send(body)
      await timers.advance(10)
      member(0).noteProbedHead(7n, timers.now())
      const { outcome } = await onFakeClock(timers, slow)
      assert.ok(outcome instanceof UpstreamTimeoutError && outcome.nodeWorked, String(outcome))
      // one that was sent before the call began says nothing of it
      const before = setup(['hang'], { fakeTimers: true, timeoutMs: 100 })
      before.member(0).noteProbedHead(7n, before.timers.now() - 1)
      const late = await onFakeClock(before.timers, before.pool.send(body))
      assert.ok(
        late.outcome instanceof UpstreamTimeoutError && !late.outcome.nodeWorked,
        String(late.outcome),
      )
    })

    it('a call slow by its nature moves on to another member, and is paid for even if that one fails', async () => {
      const { pool, stubs, member, timers } = setup(['answer', 500], {
        fakeTimers: true,
        timeoutMs: 1000,
        attemptTimeoutMs: 50,
        maxAttempts: 2,
        breakerFailures: 1,
      })
      ;(stubs[0] as StubUpstream).script.push('hang')
      const slow = pool.send(body, { retry: true })
      await timers.advance(10)
      assert.equal(await answeredBy(pool), 'a')
      const { ms, outcome } = await onFakeClock(timers, slow)
      assert.ok(outcome instanceof UpstreamTimeoutError && outcome.nodeWorked, String(outcome))
      assert.ok(ms < 100, `it ended when b failed, far from the deadline (${ms} ms)`)
      assert.deepEqual(
        stubs.map((stub) => stub.calls),
        [2, 1],
      )
      assert.deepEqual([member(0).breaker.state, member(0).failures], ['closed', 0])
    })

    it('timeouts of calls the node answered nothing about meanwhile are free, and only its liveness check may take it out of use', async () => {
      const { pool, stubs, member, timers } = setup(['hang'], {
        fakeTimers: true,
        timeoutMs: 100,
        breakerFailures: 1,
      })
      const sa = stubs[0] as StubUpstream
      sa.liveness = 'answer'
      // one key's four slow calls at once, and nothing else at the node
      const slow = await onFakeClock(
        timers,
        Promise.all([0, 1, 2, 3].map(() => pool.send(body).catch((err) => err))),
      )
      for (const outcome of slow.outcome as unknown[])
        assert.ok(outcome instanceof UpstreamTimeoutError && !outcome.nodeWorked, String(outcome))
      // another key's call right after is served: the silences wait for the check, which it answers
      sa.behaviour = 'answer'
      assert.equal(await answeredBy(pool), 'a')
      await until(() => member(0).requests === 5, 'the liveness check answered')
      assert.deepEqual(
        [member(0).breaker.state, member(0).failures, sa.checks, sa.calls],
        ['closed', 0, 1, 5],
      )
    })
  })

  describe('deadline', () => {
    it('a hanging member is left after attemptTimeoutMs for the next one', async () => {
      const { pool, stubs, member, timers } = setup(['hang', 'answer'], {
        fakeTimers: true,
        attemptTimeoutMs: 50,
        timeoutMs: 1000,
      })
      const { ms, outcome } = await onFakeClock(timers, answeredBy(pool, { retry: true }))
      assert.equal(outcome, 'b')
      // b answers as soon as it is asked: once a's attempt timed out
      assert.equal(ms, 50)
      assert.equal((stubs[0] as StubUpstream).aborts, 1)
      // held against it once its liveness check, as long as an attempt, goes unanswered too
      assert.equal(member(0).failures, 0)
      await timers.advance(50)
      assert.match(member(0).lastError ?? '', /no answer within 50 ms/)
      assert.deepEqual([member(0).failures, (stubs[0] as StubUpstream).checks], [1, 1])
    })

    it('one hanging member: a 504 at the deadline, in one attempt when no other member is left', async () => {
      const { pool, stubs, timers } = setup(['hang'], {
        fakeTimers: true,
        timeoutMs: 150,
        attemptTimeoutMs: 40,
      })
      const { ms, outcome } = await onFakeClock(timers, pool.send(body, { retry: true }))
      assert.ok(outcome instanceof UpstreamTimeoutError, String(outcome))
      assert.equal(ms, 150)
      assert.equal((stubs[0] as StubUpstream).calls, 1)
    })

    it('retrying the only member, the pauses come out of the deadline', async () => {
      const { pool, stubs, timers } = setup(['hang'], {
        fakeTimers: true,
        timeoutMs: 300,
        attemptTimeoutMs: 40,
        maxAttempts: 3,
        breakerFailures: 10,
        random: () => 0,
      })
      const sa = stubs[0] as StubUpstream
      sa.script.push(500, 500)
      const { ms, outcome } = await onFakeClock(timers, pool.send(body, { retry: true }))
      assert.ok(outcome instanceof UpstreamTimeoutError, String(outcome))
      // two 500s and their pauses (25 and 50 ms, no jitter) come out of the deadline: the last
      // attempt gets the rest of it and the call ends at it (before the pauses counted, ~50 ms late)
      assert.equal(ms, 300)
      assert.equal(sa.calls, 3)
    })

    it('with partners to follow (fallback), every attempt is bounded, even on the only member', async () => {
      const { pool, stubs, timers } = setup(['hang'], {
        fakeTimers: true,
        timeoutMs: 1000,
        attemptTimeoutMs: 30,
        maxAttempts: 2,
        breakerFailures: 10,
        random: () => 0,
      })
      const sa = stubs[0] as StubUpstream
      sa.script.push(500)
      const { ms, outcome } = await onFakeClock(timers, pool.send(body, { retry: true, fallback: true }))
      assert.ok(outcome instanceof UpstreamUnavailableError, String(outcome))
      // a 500 (in the fake clock's first 1 ms step), one pause of 25 ms (no jitter), then an attempt
      // of 30 ms, far from the deadline
      assert.equal(ms, 56)
      assert.equal(sa.calls, 2)
    })

    it('a member that had the call until its attempt timed out is not asked it again; another member is', async () => {
      const { pool, stubs, timers } = setup(['hang', 500], {
        fakeTimers: true,
        timeoutMs: 1000,
        attemptTimeoutMs: 30,
        maxAttempts: 3,
        breakerFailures: 10,
        random: () => 0,
      })
      const { outcome } = await onFakeClock(timers, pool.send(body, { retry: true }))
      assert.ok(outcome instanceof UpstreamUnavailableError, String(outcome))
      // a (timed out), b (500), then b again after a pause: never a again, though it ranks first
      assert.deepEqual(
        stubs.map((stub) => stub.calls),
        [1, 2],
      )
      // the only member, with partners to follow: one bounded attempt, then on to the partners
      const only = setup(['hang'], {
        fakeTimers: true,
        timeoutMs: 1000,
        attemptTimeoutMs: 30,
        maxAttempts: 3,
      })
      const alone = await onFakeClock(only.timers, only.pool.send(body, { retry: true, fallback: true }))
      assert.ok(alone.outcome instanceof UpstreamUnavailableError, String(alone.outcome))
      assert.deepEqual([alone.ms, (only.stubs[0] as StubUpstream).calls], [30, 1])
      // a request still queued for a connection when its time ran out never reached the node: it may go again
      const queued = setup(['queued'], {
        fakeTimers: true,
        timeoutMs: 1000,
        attemptTimeoutMs: 30,
        maxAttempts: 2,
      })
      ;(queued.stubs[0] as StubUpstream).script.push('queued')
      const requeued = await onFakeClock(
        queued.timers,
        queued.pool.send(body, { retry: true, fallback: true }),
      )
      assert.ok(requeued.outcome instanceof UpstreamUnavailableError, String(requeued.outcome))
      assert.equal((queued.stubs[0] as StubUpstream).calls, 2)
    })

    it('one hanging member: a 504 at the deadline the caller gave, without retry', async () => {
      const { pool, timers } = setup(['hang'], { fakeTimers: true, timeoutMs: 5000 })
      const { ms, outcome } = await onFakeClock(timers, pool.send(body, { deadline: timers.now() + 120 }))
      assert.ok(outcome instanceof UpstreamTimeoutError, String(outcome))
      assert.equal(ms, 120)
    })

    it('an attempt given the rest of the deadline that times out is a 504, even if the clock lags', async () => {
      // the attempt's timer fires when the clock still shows time left (timers start from the event
      // loop's cached time): still the deadline, not "no upstream available", and no sliver of an attempt
      const { pool, stubs } = setup(['hang'], { timeoutMs: 100, now: () => performance.now() * 0.8 })
      await assert.rejects(pool.send(body, { retry: true }), UpstreamTimeoutError)
      assert.equal((stubs[0] as StubUpstream).calls, 1)
    })

    it('a past deadline fails without asking anyone', async () => {
      const { pool, stubs } = setup(['answer'], { realClock: true })
      await assert.rejects(pool.send(body, { deadline: performance.now() - 1 }), UpstreamTimeoutError)
      assert.equal((stubs[0] as StubUpstream).calls, 0)
    })

    it('a request still queued for a connection does not outlive the deadline', async () => {
      const { pool, stubs, timers } = setup(['queued', 'answer'], {
        fakeTimers: true,
        timeoutMs: 100,
        attemptTimeoutMs: 30,
      })
      const retried = await onFakeClock(timers, answeredBy(pool, { retry: true }))
      assert.equal(retried.outcome, 'b')
      assert.equal(retried.ms, 30)
      const once = await onFakeClock(timers, pool.send(body, { retry: false }))
      assert.ok(once.outcome instanceof UpstreamTimeoutError, String(once.outcome))
      assert.equal(once.ms, 100)
      assert.equal((stubs[0] as StubUpstream).calls, 2)
    })
  })

  describe('attempt durations', () => {
    /** How many attempts of `outcome` a member counted, and their sum in ms. */
    const counted = (member: PoolMember, outcome: AttemptOutcome) => {
      const { cumulativeCounts, sumMs } = member.attemptDurations.read(outcome)
      return [cumulativeCounts.at(-1), sumMs]
    }

    it('each attempt is counted once, by how it ended, with how long it took', async () => {
      const { pool, member, timers } = setup(['hang', 500, 'answer'], {
        fakeTimers: true,
        attemptTimeoutMs: 50,
        timeoutMs: 1000,
      })
      const { outcome } = await onFakeClock(timers, answeredBy(pool, { retry: true }))
      assert.equal(outcome, 'c')
      // the timeout took its 50 ms; b and c answered within the 1 ms steps of the fake clock
      assert.deepEqual(counted(member(0), 'timeout'), [1, 50])
      assert.deepEqual([counted(member(1), 'error')[0], counted(member(2), 'ok')[0]], [1, 1])
      assert.ok([counted(member(1), 'error')[1], counted(member(2), 'ok')[1]].every((ms) => (ms ?? 9) <= 1))
      // the timeout in the bucket up to 50 ms, not below
      assert.deepEqual(member(0).attemptDurations.read('timeout').cumulativeCounts.slice(0, 3), [0, 0, 1])
      for (const [index, outcome] of [
        [0, 'ok'],
        [0, 'error'],
        [0, 'cancelled'],
        [1, 'ok'],
        [2, 'error'],
      ] as const)
        assert.deepEqual(counted(member(index), outcome), [0, 0], `${index} ${outcome}`)
    })

    it('an attempt the client left is cancelled, with the time it ran', async () => {
      const { pool, member, timers } = setup(['hang'], { fakeTimers: true })
      const cancellation = new Cancellation()
      const call = pool.send(body, { cancellation }).catch((err: Error) => err)
      await timers.advance(10)
      cancellation.cancel()
      assert.ok((await call) instanceof ClientGoneError)
      assert.deepEqual(
        [counted(member(0), 'cancelled'), counted(member(0), 'timeout')],
        [
          [1, 10],
          [0, 0],
        ],
      )
    })
  })

  describe('client cancellation', () => {
    it('rejects with ClientGoneError, aborts the request, and is not a member failure', async () => {
      const { pool, stubs, member, timers } = setup(['hang', 'answer'], {
        fakeTimers: true,
        breakerFailures: 1,
      })
      const cancellation = new Cancellation()
      const call = pool.send(body, { retry: true, cancellation }).catch((err: Error) => err)
      // the client leaves 10 ms into a's attempt (well before attemptTimeoutMs)
      await timers.advance(10)
      cancellation.cancel()
      const outcome = await call
      assert.ok(outcome instanceof ClientGoneError, String(outcome))
      // it ended when the client left: no attempt timer is left to fire
      assert.deepEqual([timers.now(), timers.pending()], [10, 0])
      assert.equal((stubs[0] as StubUpstream).aborts, 1)
      assert.equal((stubs[1] as StubUpstream).calls, 0)
      assert.deepEqual(
        [
          member(0).breaker.state,
          member(0).failures,
          member(0).breaker.consecutiveFailures,
          member(0).errorRate,
        ],
        ['closed', 0, 0, 0],
      )
    })

    it('a client already gone sends nothing further', async () => {
      const { pool, member } = setup(['answer'])
      const cancellation = new Cancellation()
      cancellation.cancel()
      await assert.rejects(pool.send(body, { cancellation }), ClientGoneError)
      assert.equal(member(0).failures, 0)
    })
  })

  describe('heads', () => {
    it('membersHead() is the highest head among members in use', () => {
      const { pool, member } = setup(['answer', 'answer', 'answer'])
      assert.equal(pool.membersHead(), undefined)
      member(0).noteProbedHead(100n)
      member(1).noteProbedHead(105n)
      member(2).noteProbedHead(103n)
      assert.equal(pool.membersHead(), 105n)
      member(1).noteProbeFailure('down')
      assert.equal(pool.membersHead(), 103n)
      member(1).noteProbedHead(106n)
      assert.equal(pool.membersHead(), 106n)
    })

    it('head-sensitive calls skip lagging members and prefer those at the head', async () => {
      const { pool, stubs, member } = setup([500, 'answer', 'answer', 'answer'], { maxLagBlocks: 2 })
      member(0).noteProbedHead(100n) // 5 behind: skipped
      member(1).noteProbedHead(103n) // 2 behind: used after the top
      member(2).noteProbedHead(105n) // the top
      // member 3: head unknown, used after the top
      assert.equal(await answeredBy(pool, { headSensitive: true }), 'c')
      ;(stubs[2] as StubUpstream).behaviour = 500
      assert.equal(await answeredBy(pool, { headSensitive: true, retry: true }), 'b')
      assert.equal((stubs[0] as StubUpstream).calls, 0)
      // calls that do not depend on the head go in config order
      ;(stubs[0] as StubUpstream).behaviour = 'answer'
      assert.equal(await answeredBy(pool), 'a')
    })

    it('a member catching up is used again for head-sensitive calls', async () => {
      const { pool, member } = setup(['answer', 'answer'], { maxLagBlocks: 1 })
      member(0).noteProbedHead(10n)
      member(1).noteProbedHead(12n)
      assert.equal(await answeredBy(pool, { headSensitive: true }), 'b')
      member(0).noteProbedHead(12n)
      assert.equal(await answeredBy(pool, { headSensitive: true }), 'a')
    })
  })

  describe('calls pinned to a block', () => {
    const outOfRange = {
      error: { code: -32602, message: 'BlockOutOfRangeError: block height is 100 but requested was 50' },
    }
    const nullAnswer = { respond: () => '{"jsonrpc":"2.0","id":1,"result":null}' }

    it('a member is not asked for a block above its head; for one at or below it, it is', async () => {
      const { pool, stubs, member } = setup(['answer', 'answer'])
      member(0).noteProbedHead(30n)
      member(1).noteProbedHead(100n)
      assert.equal(await answeredBy(pool, { block: 36n }), 'b')
      assert.equal(await answeredBy(pool, { block: 36n, needsState: true, headSensitive: true }), 'b')
      assert.equal((stubs[0] as StubUpstream).calls, 0)
      assert.equal(await answeredBy(pool, { block: 30n }), 'a')
    })

    it('a member is not asked for state below the earliest it keeps, nor for blocks below the earliest it has', async () => {
      const { pool, member } = setup(['answer', 'answer'])
      member(0).noteProbedHead(100n)
      member(1).noteProbedHead(100n)
      member(0).noteEarliestState(90n)
      assert.equal(await answeredBy(pool, { block: 50n, needsState: true }), 'b')
      assert.equal(await answeredBy(pool, { block: 90n, needsState: true }), 'a')
      // it keeps the block, only not its state
      assert.equal(await answeredBy(pool, { block: 50n }), 'a')
      member(0).noteEarliestBlock(60n)
      assert.equal(await answeredBy(pool, { block: 50n }), 'b')
      // calls not pinned keep to the usual order
      assert.equal(await answeredBy(pool), 'a')
    })

    it('a refusal for want of state at or below its head is remembered: the member is not asked again for it', async () => {
      const { pool, stubs, member } = setup([outOfRange, 'answer'])
      member(0).noteProbedHead(100n)
      member(1).noteProbedHead(100n)
      assert.equal(await answeredBy(pool, { block: 50n, needsState: true, retry: true }), 'b')
      assert.equal(member(0).earliestState, 51n)
      ;(stubs[0] as StubUpstream).behaviour = 'answer'
      for (const block of [50n, 20n]) {
        assert.equal(await answeredBy(pool, { block, needsState: true, retry: true }), 'b')
      }
      assert.equal((stubs[0] as StubUpstream).calls, 1)
      assert.equal(await answeredBy(pool, { block: 51n, needsState: true }), 'a')
      // what it keeps of blocks is another matter
      assert.equal(member(0).earliestBlock, undefined)
    })

    it('a range (eth_getLogs, eth_feeHistory) goes only to members with its last block and its first', async () => {
      const { pool, stubs, member } = setup(['answer', 'answer'])
      member(0).noteProbedHead(100n)
      member(1).noteProbedHead(100n)
      member(0).noteEarliestBlock(20n)
      assert.equal(
        await answeredBy(pool, { fromBlock: 10n, block: 40n }),
        'b',
        'its window starts inside the range',
      )
      assert.equal((stubs[0] as StubUpstream).calls, 0)
      assert.equal(await answeredBy(pool, { fromBlock: 20n, block: 40n }), 'a')
      assert.equal(
        await answeredBy(pool, { fromBlock: 20n, block: 101n }),
        'a',
        'none has it all: the best one',
      )
      member(1).noteEarliestBlock(0n)
      assert.equal(await answeredBy(pool, { fromBlock: 20n, block: 101n }), 'a', 'none has its last block')
    })

    it("a range's refusal is remembered as what it says: the block it names, else the range's first, never past its last", async () => {
      const missingTrie = { error: { code: -32000, message: 'missing trie node 01 (path )' } }
      for (const [behaviour, fromBlock, block, learned] of [
        [outOfRange, 30n, 60n, 51n], // it names 50, inside the range
        [outOfRange, 10n, 40n, 11n], // it names 50, past the range's last block: its first then
        [missingTrie, 10n, 40n, 11n], // it names none: its first
        [missingTrie, 40n, 40n, 41n], // one block
      ] as const) {
        const { pool, member } = setup([behaviour, 'answer'])
        member(0).noteProbedHead(100n)
        member(1).noteProbedHead(100n)
        assert.equal(await answeredBy(pool, { fromBlock, block, needsState: true, retry: true }), 'b')
        assert.equal(member(0).earliestState, learned, `${fromBlock}..${block}`)
      }
    })

    it('a refusal for a block above its head (or with its head unknown) says it lags, not what it keeps', async () => {
      const { pool, member } = setup([outOfRange, 'answer'])
      assert.equal(await answeredBy(pool, { block: 50n, needsState: true, retry: true }), 'b')
      assert.equal(member(0).earliestState, undefined)
    })

    it('a member whose head is not known yet is asked for a pinned block only when no other is known to have it', async () => {
      const { pool, stubs, member } = setup(['answer', 'answer'])
      member(1).noteProbedHead(100n)
      assert.equal(await answeredBy(pool, { block: 50n }), 'b')
      assert.equal((stubs[0] as StubUpstream).calls, 0)
      assert.equal(await answeredBy(pool, { block: 101n }), 'a')
    })

    it('when no member is known to have the block, the best one is asked anyway', async () => {
      const { pool, member } = setup(['answer', 'answer'])
      member(0).noteProbedHead(30n)
      member(1).noteProbedHead(30n)
      assert.equal(await answeredBy(pool, { block: 50n }), 'a')
      member(0).noteEarliestState(40n)
      member(1).noteEarliestState(40n)
      assert.equal(await answeredBy(pool, { block: 20n, needsState: true }), 'a')
    })

    it('a member without the block is not asked even after the one that has it failed', async () => {
      const { pool, stubs, member } = setup(['answer', 500, 'answer'])
      for (let index = 0; index < 3; index++) member(index).noteProbedHead(100n)
      member(0).noteEarliestState(90n)
      assert.equal(await answeredBy(pool, { block: 50n, needsState: true, retry: true }), 'c')
      assert.equal((stubs[0] as StubUpstream).calls, 0)
    })

    it('nullIsMissing: a null result moves the call on; null is the answer when every member says so', async () => {
      const { pool, stubs } = setup([nullAnswer, 'answer'])
      assert.equal(await answeredBy(pool, { nullIsMissing: true, retry: true }), 'b')
      // without it, null is the answer
      assert.equal(
        (await pool.send(body, { retry: true })).toString(),
        '{"jsonrpc":"2.0","id":1,"result":null}',
      )
      ;(stubs[1] as StubUpstream).behaviour = nullAnswer
      const before = stubs.map((stub) => stub.calls)
      assert.equal(
        (await pool.send(body, { retry: true, nullIsMissing: true })).toString(),
        '{"jsonrpc":"2.0","id":1,"result":null}',
      )
      assert.deepEqual(
        stubs.map((stub, index) => stub.calls - (before[index] as number)),
        [1, 1],
      )
    })
  })

  describe('node error answers (docs/compatibility.md §7)', () => {
    const missing = { error: { code: -32000, message: 'missing trie node 01 (path )' } }
    const limited = { error: { code: -32005, message: 'daily request count exceeded, request rate limited' } }
    const revert = { error: { code: 3, message: 'execution reverted: rate limit exceeded' } }

    it('missing data: the next member answers; the first loses standing but keeps its breaker closed', async () => {
      const { pool, stubs, member } = setup([missing, 'answer'])
      assert.equal(await answeredBy(pool, { retry: true }), 'b')
      assert.deepEqual([member(0).failures, member(0).breaker.consecutiveFailures], [1, 0])
      assert.ok(member(0).errorRate > 0)
      // it stays first in line: one miss is not a fault
      ;(stubs[0] as StubUpstream).behaviour = 'answer'
      assert.equal(await answeredBy(pool, { retry: true }), 'a')
    })

    it('capacity errors count toward the breaker, like HTTP 429', async () => {
      const { pool, member } = setup([limited, 'answer'])
      for (let i = 0; i < 3; i++) assert.equal(await answeredBy(pool, { retry: true }), 'b')
      assert.equal(member(0).breaker.state, 'open')
    })

    it('a revert is an answer: no other member is asked, nothing is held against the node', async () => {
      const { pool, stubs, member } = setup([revert, 'answer'])
      const answer = JSON.parse((await pool.send(body, { retry: true })).toString())
      assert.deepEqual(answer.error, revert.error)
      assert.deepEqual([(stubs[1] as StubUpstream).calls, member(0).failures], [0, 0])
    })

    it("every member missing the data: the last node's answer, each node asked once", async () => {
      const other = { error: { code: -32000, message: 'header not found' } }
      const { pool, stubs } = setup([missing, other])
      const answer = JSON.parse((await pool.send(body, { retry: true })).toString())
      assert.deepEqual(answer.error, other.error)
      assert.deepEqual(
        stubs.map((stub) => stub.calls),
        [1, 1],
      )
    })

    it('with partners to follow, it rejects with NodeErrorAnswer carrying that answer', async () => {
      const { pool } = setup([missing], { realClock: true })
      const err = await pool.send(body, { retry: true, fallback: true }).catch((error: unknown) => error)
      assert.ok(err instanceof NodeErrorAnswer)
      assert.deepEqual(JSON.parse(err.answer.toString()).error, missing.error)
    })

    it('every member out of capacity: a 503', async () => {
      const { pool } = setup([limited, limited], { realClock: true })
      await assert.rejects(pool.send(body, { retry: true }), UpstreamUnavailableError)
    })
  })

  describe("gas over a node's per-transaction cap (EIP-7825)", () => {
    const call = (gas?: string) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_call',
        params: [{ to: '0x01', ...(gas ? { gas } : {}) }],
      })
    /** A node enforcing 2^24 on calls: refuses more (its own default of 30M too), answers the gas it was sent. */
    const enforcing = {
      respond: (request: string) => {
        const { gas } = (JSON.parse(request) as { params: [{ gas?: string }] }).params[0]
        const sent = gas === undefined ? 30_000_000n : BigInt(gas)
        return sent > 16_777_216n
          ? JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              error: { code: -32000, message: `transaction gas limit too high (cap: 16777216, tx: ${sent})` },
            })
          : JSON.stringify({ jsonrpc: '2.0', id: 1, result: gas ?? null })
      },
    }

    it('a call whose gas is ours (lowered by tollgate, or none) is sent once more at the cap, and the cap is told', async () => {
      const learned: [bigint, boolean][] = []
      const { pool, stubs } = setup([enforcing], { onGasCap: (cap, filled) => learned.push([cap, filled]) })
      const lowered = await pool.send(call('0x1c9c380'), { capsGas: 'ours', retry: true })
      assert.deepEqual(JSON.parse(lowered.toString()), { jsonrpc: '2.0', id: 1, result: '0x1000000' })
      const filled = JSON.parse((await pool.send(call(), { capsGas: 'ours', retry: true })).toString())
      assert.deepEqual(filled.result, '0x1000000')
      assert.deepEqual(learned, [
        [16_777_216n, false],
        [16_777_216n, true],
      ])
      assert.equal(stubs[0]?.calls, 4)
    })

    it("the client's own gas refused is the client's answer; the cap is told all the same", async () => {
      const learned: [bigint, boolean][] = []
      const { pool, stubs } = setup([enforcing], { onGasCap: (cap, filled) => learned.push([cap, filled]) })
      const answer = JSON.parse(
        (await pool.send(call('0x1c9c380'), { capsGas: 'client', retry: true })).toString(),
      )
      assert.match(answer.error.message, /tx: 30000000/)
      assert.deepEqual(learned, [[16_777_216n, false]])
      assert.equal(stubs[0]?.calls, 1)
    })

    it('a cap the gas sent is not over is neither told nor used: the refusal is the answer', async () => {
      // a node naming a cap above the gas it was sent (a lower cap of its own, misworded)
      const misworded = {
        respond: () =>
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            error: { code: -32000, message: 'transaction gas limit too high (cap: 16777216, tx: 30000000)' },
          }),
      }
      for (const capsGas of ['ours', 'client'] as const) {
        const learned: bigint[] = []
        const { pool, stubs } = setup([misworded], { onGasCap: (cap) => learned.push(cap) })
        const answer = JSON.parse((await pool.send(call('0x100000'), { capsGas, retry: true })).toString())
        assert.match(answer.error.message, /cap: 16777216/)
        assert.deepEqual(learned, [], capsGas)
        assert.equal(stubs[0]?.calls, 1, capsGas)
      }
    })

    it('any other call gets the refusal as its answer, untold (a signed transaction: its gas is its own)', async () => {
      const learned: bigint[] = []
      const { pool, stubs } = setup([enforcing], { onGasCap: (cap) => learned.push(cap) })
      const answer = JSON.parse((await pool.send(call('0x1c9c380'), { retry: true })).toString())
      assert.match(answer.error.message, /tx: 30000000/)
      assert.equal(stubs[0]?.calls, 1)
      assert.deepEqual(learned, [])
    })
  })

  it('answeredBy: how many members answered the node error the call ends with (every upstream, or fewer)', async () => {
    const refusal = { error: { code: 35, message: 'ranges over 10 blocks are not supported on freetier' } }
    const both = setup([refusal, refusal])
    const all = { members: 0 }
    await both.pool.send(body, { retry: true, answeredBy: all })
    assert.deepEqual(all, { members: 2 })

    const oneDown = setup([500, refusal])
    const fewer = { members: 0 }
    const answer = JSON.parse((await oneDown.pool.send(body, { retry: true, answeredBy: fewer })).toString())
    assert.equal(answer.error.code, 35)
    assert.deepEqual(fewer, { members: 1 }, 'the member that failed did not refuse')
  })

  describe('eth_sendRawTransaction (docs/compatibility.md §7)', () => {
    const raw = '0x02f86c827a6980843b9aca00850ba43b7400825208940000000000000000000000000000000000000000'
    const hash = keccak256(raw)
    const rawTransaction = { bytes: raw, receiptWaitMs: undefined }
    const send = (pool: UpstreamPool) =>
      pool.send(body, { rawTransaction }).then((answer) => JSON.parse(answer.toString()))
    const known = { error: { code: -32000, message: 'already known' } }
    const nonceTooLow = { error: { code: -32000, message: 'nonce too low' } }
    /** A node that has mined the transaction (or not): answers lookups by hash. */
    const lookUp = (has: boolean) => ({
      respond: (request: string) =>
        request.includes('eth_getTransactionByHash')
          ? JSON.stringify({ jsonrpc: '2.0', id: 1, result: has ? { hash } : null })
          : JSON.stringify({ jsonrpc: '2.0', id: 1, error: nonceTooLow.error }),
    })

    it('sent once when the first member answers, whatever it answers', async () => {
      const { pool, stubs } = setup([known, 'answer'])
      assert.deepEqual((await send(pool)).error, known.error)
      assert.deepEqual(
        stubs.map((stub) => stub.calls),
        [1, 0],
      )
    })

    it('resent after a failure a node may have seen; `already known` then answers the hash', async () => {
      const { pool, stubs } = setup(['reset', known])
      assert.deepEqual(await send(pool), { jsonrpc: '2.0', id: 1, result: hash })
      assert.deepEqual(
        stubs.map((stub) => stub.calls),
        [1, 1],
      )
    })

    it('`nonce too low` on a resend: the hash if the node has the transaction, else its error', async () => {
      const mined = setup(['reset', lookUp(true)])
      assert.deepEqual(await send(mined.pool), { jsonrpc: '2.0', id: 1, result: hash })
      assert.equal((mined.stubs[1] as StubUpstream).calls, 2, 'the send, then the look-up')
      const taken = setup(['reset', lookUp(false)])
      assert.deepEqual((await send(taken.pool)).error, nonceTooLow.error)
    })

    it("`already known` after a refused connection (no node saw it) is not the gateway's own send", async () => {
      const { pool } = setup(['refused', known])
      assert.deepEqual((await send(pool)).error, known.error)
    })
  })

  describe('eth_sendRawTransactionSync (docs/compatibility.md §7)', () => {
    const raw = '0x02f86c827a6980843b9aca00850ba43b7400825208940000000000000000000000000000000000000000'
    const hash = keccak256(raw)
    const receipt = { transactionHash: hash, blockNumber: '0x5', status: '0x1', logs: [] }
    const rawTransaction = { bytes: raw, receiptWaitMs: 300 }
    const send = (pool: UpstreamPool) =>
      pool.send(body, { rawTransaction }).then((answer) => JSON.parse(answer.toString()))
    const known = { code: -32000, message: 'already known' }
    const nonceTooLow = { code: -32000, message: 'nonce too low' }
    /** A node that refuses the send with `error`, and has the receipt (or not): answers its look-up. */
    const nodeWith = (error: { code: number; message: string }, mined: boolean) => ({
      respond: (request: string) =>
        request.includes('eth_getTransactionReceipt')
          ? JSON.stringify({ jsonrpc: '2.0', id: 1, result: mined ? receipt : null })
          : JSON.stringify({ jsonrpc: '2.0', id: 1, error }),
    })
    const timedOut = {
      code: 4,
      message: "The transaction was added to the transaction pool but wasn't processed in 300ms",
      data: hash,
    }

    it("the node's own timeout (code 4) is its answer: passed through, never resent", async () => {
      const { pool, stubs } = setup([{ error: timedOut }, 'answer'])
      assert.deepEqual((await send(pool)).error, timedOut)
      assert.deepEqual(
        stubs.map((stub) => stub.calls),
        [1, 0],
      )
    })

    it('resent after a failure a node may have seen; `already known` then answers the receipt, asked of that node', async () => {
      const { pool, stubs } = setup(['reset', nodeWith(known, true)])
      assert.deepEqual(await send(pool), { jsonrpc: '2.0', id: 1, result: receipt })
      assert.deepEqual(
        stubs.map((stub) => stub.calls),
        [1, 2],
        'the send to each, then the look-up',
      )
    })

    it("`already known` on a resend with no receipt yet: EIP-7966's timeout, code 4 with the hash", async () => {
      const { pool } = setup(['reset', nodeWith(known, false)])
      await assert.rejects(send(pool), (err: unknown) => {
        assert.ok(err instanceof ReceiptNotReadyError, String(err))
        assert.equal(err.code, 4)
        assert.equal(err.httpStatus, 200)
        assert.deepEqual(err.wireFields, { data: hash })
        return true
      })
    })

    it('`nonce too low` on a resend: the receipt if the node mined it, else its error', async () => {
      const mined = setup(['reset', nodeWith(nonceTooLow, true)])
      assert.deepEqual(await send(mined.pool), { jsonrpc: '2.0', id: 1, result: receipt })
      const taken = setup(['reset', nodeWith(nonceTooLow, false)])
      assert.deepEqual((await send(taken.pool)).error, nonceTooLow)
    })

    it('each attempt is given the wait beyond attemptTimeoutMs: a member still waiting is not left for another', async () => {
      const waiting = setup(['held', 'answer'], { fakeTimers: true, attemptTimeoutMs: 50, timeoutMs: 1_000 })
      const sync = waiting.pool.send(body, { rawTransaction, deadline: waiting.timers.now() + 1_300 })
      for (let ms = 0; ms < 340; ms++) {
        await waiting.timers.advance(1)
        await new Promise((resolve) => setImmediate(resolve))
      }
      assert.deepEqual(
        waiting.stubs.map((stub) => stub.calls),
        [1, 0],
        'still waiting on the first member at 340 ms',
      )
      ;(waiting.stubs[0] as StubUpstream).release()
      assert.equal(JSON.parse((await sync).toString()).result, 'a')

      // a plain send is left after attemptTimeoutMs, and resent
      const plain = setup(['hang', 'answer'], { fakeTimers: true, attemptTimeoutMs: 50, timeoutMs: 1_000 })
      const sent = plain.pool.send(body, { rawTransaction: { bytes: raw, receiptWaitMs: undefined } })
      const { ms } = await onFakeClock(plain.timers, sent)
      assert.equal(ms, 50)
    })

    it('a member that has not answered within attemptTimeoutMs and the wait is left for the next', async () => {
      const { pool, stubs, timers } = setup(['hang', nodeWith(known, true)], {
        fakeTimers: true,
        attemptTimeoutMs: 50,
        timeoutMs: 1_000,
      })
      const { ms, outcome } = await onFakeClock(timers, send(pool))
      assert.deepEqual(outcome, { jsonrpc: '2.0', id: 1, result: receipt })
      // left at 350 ms; the resend and its look-up answer a tick later
      assert.ok(ms >= 350 && ms <= 352, `${ms} ms`)
      assert.equal((stubs[0] as StubUpstream).aborts, 1)
    })
  })

  describe('hedging', () => {
    const hedge = { quantile: 0.9, minDelayMs: 50, maxDelayMs: 200, samples: 10 }

    /** A pool that hedges, on fake timers: nothing here sleeps. */
    function hedged(behaviours: Behaviour[], options: Partial<UpstreamPoolOptions> = {}) {
      const timers = createFakeTimers()
      const subject = setup(behaviours, {
        timeoutMs: 10_000,
        attemptTimeoutMs: 5_000,
        hedge,
        timers,
        now: () => timers.now(),
        ...options,
      })
      return { ...subject, timers }
    }
    const settled = () => new Promise((resolve) => setImmediate(resolve))

    it('an idempotent call not answered after maxDelayMs (no latencies yet) goes to the next member too; the first answer wins, the other is aborted', async () => {
      const { pool, stubs, member, timers } = hedged(['hang', 'answer'])
      const answer = answeredBy(pool, { retry: true })
      await timers.advance(199)
      assert.equal((stubs[1] as StubUpstream).calls, 0)
      await timers.advance(1)
      assert.equal(await answer, 'b')
      assert.deepEqual(
        stubs.map((stub) => [stub.calls, stub.aborts]),
        [
          [1, 1],
          [1, 0],
        ],
      )
      assert.deepEqual([member(0).hedges, member(0).failures, member(0).lastError], [1, 0, undefined])
    })

    it("a call's trail records the first attempt and the hedge, each with its outcome", async () => {
      const { pool, timers } = hedged(['hang', 'answer'])
      const trail = new CallTrail(undefined)
      const answer = pool.send('{}', { retry: true, trail })
      await timers.advance(200)
      await answer
      assert.deepEqual(
        trail.attempts.map(({ upstream, hedge, outcome }) => [upstream, hedge, outcome]),
        [
          ['#1', false, 'superseded'],
          ['#2', true, 'ok'],
        ],
      )
      assert.equal(trail.answeredBy()?.upstream, '#2')
    })

    it("the delay is the quantile of the member's recent latencies, within minDelayMs..maxDelayMs", async () => {
      const { pool, stubs, member, timers } = hedged(['hang', 'answer'])
      const sb = stubs[1] as StubUpstream
      // an answered call's latency goes into its member's window
      assert.equal(member(1).latencyQuantile(0.5), undefined)
      const call = answeredBy(pool, { retry: true })
      await timers.advance(200)
      assert.equal(await call, 'b')
      assert.notEqual(member(1).latencyQuantile(0.5), undefined)
      for (const ms of [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]) member(0).recordSuccess(ms)
      const slow = answeredBy(pool, { retry: true })
      await timers.advance(89)
      assert.equal(sb.calls, 1)
      await timers.advance(1)
      assert.equal(await slow, 'b')
      // fast members: never sooner than minDelayMs
      for (let index = 0; index < 10; index++) member(0).recordSuccess(1)
      const slowAgain = answeredBy(pool, { retry: true })
      await timers.advance(49)
      assert.equal(sb.calls, 2)
      await timers.advance(1)
      assert.equal(await slowAgain, 'b')
    })

    it('the first attempt may still win; the hedge is then aborted', async () => {
      const { pool, stubs, timers } = hedged(['held', 'hang'])
      const answer = answeredBy(pool, { retry: true })
      await timers.advance(200)
      assert.equal((stubs[1] as StubUpstream).calls, 1)
      ;(stubs[0] as StubUpstream).release()
      assert.equal(await answer, 'a')
      assert.equal((stubs[1] as StubUpstream).aborts, 1)
    })

    it('a hedge that fails waits for the first attempt, and is held against its member', async () => {
      const { pool, stubs, member, timers } = hedged(['held', 500])
      const answer = answeredBy(pool, { retry: true })
      await timers.advance(200)
      await settled()
      assert.equal(member(1).failures, 1)
      ;(stubs[0] as StubUpstream).release()
      assert.equal(await answer, 'a')
    })

    it('none for calls that are not idempotent, a transaction, one member, no attempts left, or when off', async () => {
      const cases: [Behaviour[], Parameters<UpstreamPool['send']>[1], Partial<UpstreamPoolOptions>][] = [
        [['held', 'answer'], {}, {}],
        [['held', 'answer'], { rawTransaction: { bytes: '0x01', receiptWaitMs: undefined } }, {}],
        [['held', 'answer'], { rawTransaction: { bytes: '0x01', receiptWaitMs: 100 } }, {}],
        [['held'], { retry: true }, {}],
        [['held', 'answer'], { retry: true }, { maxAttempts: 1 }],
        [['held', 'answer'], { retry: true }, { hedge: undefined }],
      ]
      for (const [behaviours, sendOptions, options] of cases) {
        const { pool, stubs, member, timers } = hedged(behaviours, options)
        const answer = pool.send(body, sendOptions)
        await timers.advance(1_000)
        ;(stubs[0] as StubUpstream).release()
        await answer
        assert.deepEqual(
          [stubs.map((stub) => stub.calls), member(0).hedges],
          [behaviours.map((_, index) => (index === 0 ? 1 : 0)), 0],
          JSON.stringify([sendOptions, options]),
        )
      }
    })

    it('the client going away stops both attempts', async () => {
      const { pool, stubs, member, timers } = hedged(['hang', 'hang'])
      const cancellation = new Cancellation()
      const answer = pool.send(body, { retry: true, cancellation })
      await timers.advance(200)
      cancellation.cancel()
      await assert.rejects(answer, ClientGoneError)
      await settled()
      assert.deepEqual(
        stubs.map((stub) => stub.aborts),
        [1, 1],
      )
      assert.deepEqual([member(0).failures, member(1).failures], [0, 0])
    })

    it('refuses a quantile outside 0..1 or minDelayMs above maxDelayMs', () => {
      assert.throws(() => setup(['answer'], { hedge: { ...hedge, quantile: 1.5 } }), RangeError)
      assert.throws(() => setup(['answer'], { hedge: { ...hedge, minDelayMs: 300 } }), RangeError)
    })
  })

  it('close closes every upstream', async () => {
    const { pool, stubs } = setup(['answer', 'answer'])
    await pool.close()
    assert.deepEqual(
      stubs.map((stub) => stub.closed),
      [true, true],
    )
  })
})
