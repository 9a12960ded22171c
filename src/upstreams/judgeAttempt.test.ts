import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ClientGoneError, NodeErrorAnswer } from '../errors/callEndings.ts'
import { InvalidParamsError } from '../errors/rpcErrors.ts'
import { UpstreamTimeoutError, UpstreamUnavailableError } from '../errors/upstreamErrors.ts'
import {
  type AttemptFailure,
  judgeAttempt,
  judgeTimeoutAtNode,
  mayFailOver,
  mayRetry,
} from './judgeAttempt.ts'

const answered = (body: string, status = 200) =>
  judgeAttempt({ response: { status, body: Buffer.from(body) } })
const nodeError = (code: number, message: string) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code, message } })

describe('judgeAttempt', () => {
  it('a result, a revert and an unknown error are answers', () => {
    for (const body of [
      '{"jsonrpc":"2.0","id":1,"result":"0x1"}',
      '{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"execution reverted","data":"0x"}}',
      nodeError(-32000, 'insufficient funds for gas * price + value'),
      ' [{"jsonrpc":"2.0","id":1,"result":null}]',
    ]) {
      const verdict = answered(body)
      assert.ok('answer' in verdict, body)
      assert.equal(verdict.answer.toString(), body)
    }
  })

  it("a node's refusal over its per-transaction gas cap carries the cap; a revert quoting that wording does not", () => {
    const refusal = answered(
      nodeError(-32000, 'transaction gas limit (16777217) is greater than the cap (16777216)'),
    )
    assert.ok('answer' in refusal)
    assert.equal(refusal.gasCap, 16_777_216n)
    const revert = answered(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        error: { code: 3, message: 'execution reverted: transaction gas limit too high (cap: 21000, tx: 1)' },
      }),
    )
    assert.deepEqual(Object.keys(revert), ['answer'], 'an answer, without a cap')
  })

  it('transport failures: refused connections were never sent; others may have been', () => {
    const refused = judgeAttempt({
      error: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    })
    assert.deepEqual(refused, { reason: 'connect ECONNREFUSED', blame: 'down', unsent: true })
    const reset = judgeAttempt({
      error: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
    })
    assert.deepEqual(reset, { reason: 'other side closed', blame: 'down', unsent: false })
    // still queued for a connection: the node never had it
    assert.deepEqual(judgeAttempt({ timedOutMs: 250, sent: false }), {
      reason: 'no answer within 250 ms',
      blame: 'down',
      timedOut: true,
    })
    assert.deepEqual(judgeAttempt({ timedOutMs: 250, sent: true }), {
      reason: 'no answer within 250 ms',
      blame: 'down',
      timedOut: true,
      atNode: true,
    })
    assert.deepEqual(judgeAttempt({ clientGone: true }), {
      reason: 'the client went away',
      blame: 'none',
      clientGone: true,
    })
  })

  it('HTTP statuses: load and credentials count against the upstream, a refusal of the request does not', () => {
    assert.deepEqual(answered('{}', 503), { reason: 'HTTP 503', blame: 'down' })
    assert.deepEqual(answered('{}', 429), { reason: 'HTTP 429', blame: 'down' })
    assert.deepEqual(answered('{}', 401), { reason: 'HTTP 401', blame: 'down' })
    assert.deepEqual(answered('{}', 413), { reason: 'HTTP 413', blame: 'none' })
    assert.deepEqual(answered('<html>bad gateway</html>'), {
      reason: 'an answer that is not JSON',
      blame: 'down',
    })
  })

  it("an HTTP 4xx carrying a JSON-RPC error is the node's answer, judged like any node error", () => {
    const range = nodeError(35, 'ranges over 1000 blocks are not supported on freetier')
    assert.deepEqual(answered(range, 400), {
      reason: '35: ranges over 1000 blocks are not supported on freetier',
      blame: 'none',
      nodeAnswer: Buffer.from(range),
    })
    const quickNode = nodeError(-32614, 'eth_getLogs is limited to a 10,000 range')
    assert.ok('nodeAnswer' in answered(quickNode, 413))
    // proxyd's refusal, known by its meaning: kept for the split, not passed on as the answer
    const proxyd =
      '{"jsonrpc":"2.0","error":{"code":-32602,"message":"block range greater than 1000 max"},"id":1}'
    assert.deepEqual(answered(proxyd, 400), {
      reason: '-32602: block range greater than 1000 max',
      blame: 'none',
      nodeAnswer: Buffer.from(proxyd),
    })
    // an error the table does not name is the client's answer, whatever the status
    const invalid = nodeError(-32602, 'invalid argument 0: hex string without 0x prefix')
    const verdict = answered(invalid, 400)
    assert.ok('answer' in verdict && verdict.answer.toString() === invalid)
    // not for statuses about the upstream itself, nor for bodies that are no JSON-RPC error
    assert.deepEqual(answered(range, 429), { reason: 'HTTP 429', blame: 'down' })
    assert.deepEqual(answered(range, 401), { reason: 'HTTP 401', blame: 'down' })
    assert.deepEqual(answered('{"error":"nope"}', 400), { reason: 'HTTP 400', blame: 'none' })
    assert.deepEqual(answered('<html>Bad Request</html>', 400), { reason: 'HTTP 400', blame: 'none' })
  })

  it('node errors: capacity counts like a 429; missing data degrades and keeps the answer; refusals keep it only', () => {
    assert.deepEqual(answered(nodeError(-32005, 'daily request count exceeded, request rate limited')), {
      reason: '-32005: daily request count exceeded, request rate limited',
      blame: 'down',
    })
    const missing = nodeError(-32000, 'missing trie node 01 (path )')
    assert.deepEqual(answered(missing), {
      reason: '-32000: missing trie node 01 (path )',
      blame: 'degraded',
      nodeAnswer: Buffer.from(missing),
      missingBlock: undefined,
    })
    // the block it names, where it names one
    const pruned = nodeError(-32602, 'BlockOutOfRangeError: block height is 300 but requested was 50')
    const verdict = answered(pruned)
    assert.equal('missingBlock' in verdict && verdict.missingBlock, 50n)
    const tooMany = nodeError(-32005, 'query returned more than 10000 results')
    assert.deepEqual(answered(tooMany), {
      reason: '-32005: query returned more than 10000 results',
      blame: 'none',
      nodeAnswer: Buffer.from(tooMany),
    })
  })

  it('an attempt stopped for a hedge that answered first says nothing of the upstream', () => {
    assert.deepEqual(judgeAttempt({ superseded: true }), {
      reason: 'another upstream answered first',
      blame: 'none',
      superseded: true,
    })
  })
})

describe('judgeTimeoutAtNode', () => {
  const atNode = judgeAttempt({ timedOutMs: 900, sent: true }) as AttemptFailure

  it('the node answered others meanwhile: slow by its nature, the key’s, nothing held against the node', () => {
    assert.deepEqual(judgeTimeoutAtNode(atNode, true), {
      reason: 'no answer within 900 ms, answering others meanwhile',
      blame: 'none',
      timedOut: true,
      atNode: true,
      worked: true,
    })
  })

  it('the node answered nothing meanwhile: silent, for its liveness check to judge, and no work of the call’s', () => {
    assert.deepEqual(judgeTimeoutAtNode(atNode, false), {
      reason: 'no answer within 900 ms',
      blame: 'silent',
      timedOut: true,
      atNode: true,
    })
  })
})

describe('mayRetry', () => {
  const failure = (verdict: ReturnType<typeof judgeAttempt>) => verdict as AttemptFailure

  it('a failure is retried while attempts are left; a request never sent, whatever is left', () => {
    const timedOut = failure(judgeAttempt({ timedOutMs: 100 }))
    assert.equal(mayRetry(timedOut, true), true)
    assert.equal(mayRetry(timedOut, false), false)
    const refused = failure(
      judgeAttempt({ error: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }),
    )
    assert.equal(mayRetry(refused, false), true)
  })

  it('never once the client is gone or another attempt answered', () => {
    assert.equal(mayRetry(failure(judgeAttempt({ clientGone: true })), true), false)
    assert.equal(mayRetry(failure(judgeAttempt({ superseded: true })), true), false)
  })
})

describe('mayFailOver', () => {
  it('the upstreams timed out, could not answer, or each answered an error another node may not have', () => {
    assert.equal(mayFailOver(new UpstreamTimeoutError()), true)
    assert.equal(mayFailOver(new UpstreamUnavailableError()), true)
    assert.equal(mayFailOver(new NodeErrorAnswer(Buffer.from('{}'), 'a: -32000: header not found')), true)
  })

  it('never once the client is gone, nor for an error of the call itself, nor for a call slow by its nature', () => {
    assert.equal(mayFailOver(new ClientGoneError()), false)
    assert.equal(mayFailOver(new UpstreamTimeoutError(undefined, true)), false)
    assert.equal(mayFailOver(new InvalidParamsError('bad block range')), false)
    assert.equal(mayFailOver(new Error('a bug')), false)
  })
})
