import { AnswerParts } from './AnswerParts.ts'
import type { RpcId, RpcPayload } from './types.ts'

export function serializeResult(id: RpcId, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result })
}

/** Joins response objects into one batch response without parsing what upstreams sent. */
export function serializeBatch(payloads: RpcPayload[]): Buffer {
  const parts: Buffer[] = [Buffer.from('[')]
  payloads.forEach((payload, index) => {
    if (index > 0) parts.push(Buffer.from(','))
    if (typeof payload === 'string') parts.push(Buffer.from(payload))
    else if (payload instanceof AnswerParts) parts.push(...payload.parts)
    else parts.push(payload)
  })
  parts.push(Buffer.from(']'))
  return Buffer.concat(parts)
}
