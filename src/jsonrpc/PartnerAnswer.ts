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
