import { Buffer } from 'node:buffer'
import { AnswerParts } from './AnswerParts.ts'
import type { RpcId, RpcPayload } from './types.ts'

export function serializeResult(id: RpcId, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result })
}

/**
 * Puts response objects together into one batch response, without parsing what upstreams sent and
 * without joining them: the parts are written out one after the other (a batch of large answers
 * copied whole into one buffer would hold the event loop from every other client).
 */
export function serializeBatch(payloads: RpcPayload[]): AnswerParts {
  const parts: Buffer[] = [openingBracket]
  payloads.forEach((payload, index) => {
    if (index > 0) parts.push(comma)
    if (typeof payload === 'string') parts.push(Buffer.from(payload))
    else if (payload instanceof AnswerParts) parts.push(...payload.parts)
    else parts.push(payload)
  })
  parts.push(closingBracket)
  return new AnswerParts(parts)
}

const openingBracket = Buffer.from('[')
const comma = Buffer.from(',')
const closingBracket = Buffer.from(']')
