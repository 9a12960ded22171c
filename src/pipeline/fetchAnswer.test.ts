import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createRpcCache } from '../cache/createRpcCache.ts'
import { ByteBulkhead } from '../failsafe/ByteBulkhead.ts'
import { Cancellation } from '../failsafe/Cancellation.ts'
import { CallsInFlight } from '../metering/CallsInFlight.ts'
import { AnswerBudget } from '../upstreams/AnswerBudget.ts'
import type { ChunkCharge } from './CallCharge.ts'
import { fetchAnswer } from './fetchAnswer.ts'
import { LogsWidths } from './LogsWidths.ts'
import type { PreparedCall } from './prepareCall.ts'
import type { Route } from './routeOf.ts'
import type { RpcContext } from './rpcContext.ts'

type ReadyCall = PreparedCall & { ok: true }

/** A network whose pool answers every call after `delayMs`, counting the calls and the most at once. */
function networkOf(delayMs: number, cache?: ReturnType<typeof createRpcCache>) {
  const sends = { calls: 0, inFlight: 0, most: 0 }
  const network = {
    name: 'devnet',
    timeoutMs: 5_000,
    cache,
    partnerReserveMs: 0,
    maxLogsResults: 10_000,
    head: { finalized: () => undefined },
    pool: {
      members: [{}],
      async send(body: string | Buffer) {
        sends.calls++
        sends.inFlight++
        sends.most = Math.max(sends.most, sends.inFlight)
        await new Promise((resolve) => setTimeout(resolve, delayMs))
        sends.inFlight--
        const { id, method } = JSON.parse(body.toString()) as { id: number; method: string }
        const result = method === 'eth_getLogs' ? [] : '0x7a69'
        return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, result }))
      },
    },
  }
  return { network, sends }
}

function contextOf(network: unknown, callsInFlight: CallsInFlight, keyId: number): RpcContext {
  return {
    network,
    callsInFlight,
    maxCallsInFlight: 1,
    key: { subject: { keyId } },
    answerBudget: new AnswerBudget(1e9, new ByteBulkhead(1e9), []),
    cancellation: new Cancellation(),
    log: { debug() {} },
  } as unknown as RpcContext
}

function readyCall(id: number, method: string): ReadyCall {
  return {
    ok: true,
    call: { id, method },
    spec: { name: method },
    params: [],
    paramsAsSent: false,
  } as unknown as ReadyCall
}

const plainRoute = { logs: undefined, checkLogs: undefined, partners: undefined } as unknown as Route
const freeCharge: ChunkCharge = {
  paysInTime: () => true,
  holdNext: async () => true,
  chargeCall() {},
  freeCall() {},
}

describe('fetchAnswer: each key waits in its own slots (CallsInFlight)', () => {
  it("a cache load another key began holds none of this key's slots: a key whose slots are full holds only itself", async () => {
    const callsInFlight = new CallsInFlight()
    const { network, sends } = networkOf(20, createRpcCache({ maxBytes: 1_000_000, maxEntryBytes: 100_000 }))
    // key 1's one slot is taken (a slow call of its own elsewhere)
    const held = callsInFlight.enter(1, 1, { deadline: Number.POSITIVE_INFINITY, cancellation: undefined })
    assert.ok(!(held instanceof Promise))
    const waiting = fetchAnswer(
      contextOf(network, callsInFlight, 1),
      readyCall(1, 'eth_chainId'),
      [],
      'immutable',
      plainRoute,
      undefined,
      freeCharge,
    )
    const other = await fetchAnswer(
      contextOf(network, callsInFlight, 2),
      readyCall(2, 'eth_chainId'),
      [],
      'immutable',
      plainRoute,
      undefined,
      freeCharge,
    )
    assert.match(
      String(other),
      /"id":2,"result":"0x7a69"/,
      "key 2 is answered while key 1's slot is still taken",
    )
    callsInFlight.leave(held)
    assert.match(String(await waiting), /"id":1,"result":"0x7a69"/)
    assert.equal(sends.calls, 1, "key 1's call, once in its slot, found key 2's answer kept")
    assert.equal(callsInFlight.keys, 0, 'every slot given back')
  })

  it('a split eth_getLogs is one call: its chunks run in the one slot of its key', async () => {
    const callsInFlight = new CallsInFlight()
    const { network, sends } = networkOf(10)
    // chunks of 10 blocks, up to a few at once
    LogsWidths.of(network as never).learnStated(10n, performance.now())
    const ctx = contextOf(network, callsInFlight, 1)
    const logsRoute = {
      logs: { filter: {}, first: 0n, last: 99n },
      checkLogs: undefined,
      partners: undefined,
    } as unknown as Route
    const splits = [0, 1, 2].map((id) =>
      fetchAnswer(ctx, readyCall(id, 'eth_getLogs'), [], 'never', logsRoute, undefined, freeCharge),
    )
    await Promise.all(splits)
    assert.equal(sends.calls, 30, 'ten chunks each')
    assert.ok(
      sends.most <= 4,
      `one split at a time (a split's own chunks at once: at most 4), saw ${sends.most}`,
    )
    assert.equal(callsInFlight.keys, 0)
  })
})
