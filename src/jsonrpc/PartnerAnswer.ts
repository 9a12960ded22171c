import type { Buffer } from 'node:buffer'
import type { RpcPayload } from './types.ts'

/**
 * An answer a partner provider gave (failover, docs/compatibility.md §7): its payload, which the client
 * is told came from a partner (X-Served-By). Every other answer is its payload alone.
 */
export class PartnerAnswer<Payload extends RpcPayload = RpcPayload> {
  constructor(readonly payload: Payload) {}
}

/** What sending a call gets: the node's bytes, or a partner's. */
export type SentAnswer = Buffer | PartnerAnswer<Buffer>

/** A call's answer: its payload, or a partner's answer (which the client is told of). */
export type CallAnswer = RpcPayload | PartnerAnswer

/** The payload of an answer, a partner's or not. */
export function payloadOf(answer: CallAnswer): RpcPayload {
  return answer instanceof PartnerAnswer ? answer.payload : answer
}

/** `payload` in place of `answer`'s, from whoever gave `answer`: a partner's answer stays one. */
export function answerLike(answer: CallAnswer, payload: RpcPayload): CallAnswer {
  return answer instanceof PartnerAnswer ? new PartnerAnswer(payload) : payload
}
