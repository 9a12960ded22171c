import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ClientGoneError, NodeErrorAnswer } from '../errors/callEndings.ts'
import { InvalidParamsError } from '../errors/rpcErrors.ts'
import { UpstreamTimeoutError, UpstreamUnavailableError } from '../errors/upstreamErrors.ts'
import { PartnerAnswer } from '../jsonrpc/PartnerAnswer.ts'
import type { UpstreamPool } from './createUpstreamPool.ts'
import type { SendOptions } from './SendOptions.ts'
import { sendWithPartners } from './sendWithPartners.ts'

/** A pool that answers `outcome` (bytes, or the error it rejects with) and keeps the options of each send. */
function stubPool(outcome: string | Error): Pick<UpstreamPool, 'send'> & { sent: SendOptions[] } {
  const sent: SendOptions[] = []
  return {
    sent,
    send(_body, options) {
      sent.push(options ?? {})
      return typeof outcome === 'string' ? Promise.resolve(Buffer.from(outcome)) : Promise.reject(outcome)
    },
  }
}

const body = '{"jsonrpc":"2.0","id":1,"method":"eth_getStorageAt","params":[]}'
const options = { deadline: 10_000, headSensitive: true, answeredBy: { members: 0 } }
const missing = Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"missing trie node"}}')

async function sent(pool: Pick<UpstreamPool, 'send'>, partners: Pick<UpstreamPool, 'send'>) {
  const causes: unknown[] = []
  const answer = await sendWithPartners(body, options, {
    pool,
    partners,
    partnerReserveMs: 1_000,
    onFailover: (cause) => causes.push(cause.logDetails),
  })
  const partner = answer instanceof PartnerAnswer
  return { body: (partner ? answer.payload : answer).toString(), partner, causes }
}

describe('sendWithPartners', () => {
  it('the upstreams answer: their answer; they had the deadline less the partners reserve, as a fallback', async () => {
    const pool = stubPool('upstream')
    const partners = stubPool('partner')
    assert.deepEqual(await sent(pool, partners), { body: 'upstream', partner: false, causes: [] })
    assert.equal(pool.sent[0]?.deadline, 9_000)
    assert.equal(pool.sent[0]?.fallback, true)
    assert.equal(partners.sent.length, 0)
  })

  it('the upstreams time out or are unavailable: the partners answer, on the whole deadline, not by head', async () => {
    for (const failure of [new UpstreamTimeoutError(), new UpstreamUnavailableError()]) {
      const partners = stubPool('partner')
      const answer = await sent(stubPool(failure), partners)
      assert.deepEqual(answer, { body: 'partner', partner: true, causes: [undefined] })
      assert.equal(partners.sent[0]?.deadline, 10_000)
      assert.equal(partners.sent[0]?.headSensitive, false)
      assert.equal(partners.sent[0]?.answeredBy, undefined)
      assert.equal(partners.sent[0]?.fallback, undefined)
    }
  })

  it('a failure of the call itself, or a client gone, is not failed over', async () => {
    for (const failure of [new InvalidParamsError('invalid argument 0'), new ClientGoneError()]) {
      const partners = stubPool('partner')
      await assert.rejects(sent(stubPool(failure), partners), failure)
      assert.equal(partners.sent.length, 0)
    }
  })

  it("every upstream's 'cannot answer now' error: the partners' answer, else the upstreams' own word", async () => {
    const failure = new NodeErrorAnswer(missing, 'every upstream: missing trie node')
    const partner = await sent(stubPool(failure), stubPool('partner'))
    assert.deepEqual(partner, {
      body: 'partner',
      partner: true,
      causes: ['every upstream: missing trie node'],
    })
    const own = await sent(stubPool(failure), stubPool(new UpstreamTimeoutError()))
    assert.deepEqual(own.body, missing.toString())
    assert.equal(own.partner, false)
  })

  it('the partners fail after the upstreams did: their failure, and a client gone is never answered', async () => {
    const timeout = new UpstreamTimeoutError()
    await assert.rejects(sent(stubPool(new UpstreamUnavailableError()), stubPool(timeout)), timeout)
    const gone = new ClientGoneError()
    await assert.rejects(sent(stubPool(new NodeErrorAnswer(missing, 'missing')), stubPool(gone)), gone)
  })
})
