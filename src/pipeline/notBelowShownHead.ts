import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { answerLike, type CallAnswer, payloadOf } from '../jsonrpc/PartnerAnswer.ts'
import { readHexResult } from '../jsonrpc/readHexResult.ts'
import { serializeResult } from '../jsonrpc/serialize.ts'
import type { RpcId, RpcPayload } from '../jsonrpc/types.ts'
import type { Network } from '../networks/createNetwork.ts'

/**
 * eth_blockNumber: never less than what a client was already told (upstreams, and instances, may lag
 * each other), and a higher number only once it may be shown (shared, it waits until every instance
 * has heard of it). A number asked for before the shown head was lowered since (`lowers`:
 * network.head.lowers then) is of the chain before the rewind: never shown. A partner's answer
 * stays one. Settles at once (no promise) unless a higher number must wait to be shown.
 */
export function notBelowShownHead(
  network: Network,
  id: RpcId,
  answer: CallAnswer,
  lowers: number,
): CallAnswer | Promise<CallAnswer> {
  const payload = payloadOf(answer)
  // the result is a short hex string: read from the answer's first bytes, without parsing it
  const number =
    readHexResult(payload instanceof AnswerParts ? payload.toBuffer() : payload) ?? parsedHexResult(payload)
  if (number === undefined) return answer
  const { head } = network
  const showing = number > head.shown && lowers === head.lowers ? head.show(number) : undefined
  if (showing) return showing.then(() => atLeastShown(network, id, answer, number))
  return atLeastShown(network, id, answer, number)
}

/** The answer of `number`, or the shown head's when that is higher. */
function atLeastShown(network: Network, id: RpcId, answer: CallAnswer, number: bigint): CallAnswer {
  const { shown } = network.head
  if (number >= shown) return answer
  return answerLike(answer, serializeResult(id, `0x${shown.toString(16)}`))
}

/** The result of an answer readHexResult could not read (a long id, say), if it is a hex quantity. */
function parsedHexResult(payload: RpcPayload): bigint | undefined {
  let result: unknown
  try {
    result = (JSON.parse(payload.toString()) as { result?: unknown }).result
  } catch {
    return undefined
  }
  return typeof result === 'string' && /^0x[0-9a-f]{1,16}$/i.test(result) ? BigInt(result) : undefined
}
