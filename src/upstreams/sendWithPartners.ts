import type { Buffer } from 'node:buffer'
import { ClientGoneError, NodeErrorAnswer } from '../errors/callEndings.ts'
import { PartnerAnswer, type SentAnswer } from '../jsonrpc/PartnerAnswer.ts'
import type { UpstreamPool } from './createUpstreamPool.ts'
import { mayFailOver } from './judgeAttempt.ts'
import type { SendOptions } from './SendOptions.ts'

/** Where a call goes: the network's upstreams, and the partners it may fail over to. */
export type PartnerFailover = {
  pool: Pick<UpstreamPool, 'send'>
  /** The partners this call may fail over to (plan, header or key switch, method). */
  partners: Pick<UpstreamPool, 'send'>
  /** What a call that may fail over keeps of its time for the partners: the upstreams get the rest. */
  partnerReserveMs: number
  /** Told why the upstreams failed when the call goes on to the partners. */
  onFailover?: ((cause: { logDetails: string | undefined }) => void) | undefined
}

/**
 * Sends a call that may fail over to the network's upstreams and, when they fail in a way that may
 * fail over (mayFailOver: none answered in time, none could answer, every one answered an error
 * another node may not have), to its partners (docs/compatibility.md §7 failover). The
 * call's deadline covers both: the upstreams get what the partners do not need. When the partners
 * fail too after every upstream answered a "cannot answer now" error, the upstreams' last error is
 * the answer (their own word on what is missing beats a partner that did not answer); a client gone
 * is never answered.
 */
export async function sendWithPartners(
  body: string | Buffer,
  options: SendOptions & { deadline: number },
  { pool, partners, partnerReserveMs, onFailover }: PartnerFailover,
): Promise<SentAnswer> {
  let failure: unknown
  try {
    const primary = { ...options, deadline: options.deadline - partnerReserveMs, fallback: true }
    return await pool.send(body, primary)
  } catch (err) {
    if (!mayFailOver(err)) throw err
    onFailover?.({ logDetails: err.logDetails })
    failure = err
  }
  // only the JSON-RPC body goes to the partner: no client headers, addresses or keys
  options.trail?.toPartners()
  try {
    const partnerOptions = { ...options, headSensitive: false, answeredBy: undefined }
    return new PartnerAnswer(await partners.send(body, partnerOptions))
  } catch (partnerErr) {
    if (failure instanceof NodeErrorAnswer && !(partnerErr instanceof ClientGoneError)) {
      return failure.answer
    }
    throw partnerErr
  }
}
