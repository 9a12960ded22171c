import type { RpcId, RpcPayload } from './types.ts'

export function serializeResult(id: RpcId, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result })
}

/** Joins response objects into one batch response without parsing what upstreams sent. */
export function serializeBatch(payloads: RpcPayload[]): Buffer {
  const parts: Buffer[] = [Buffer.from('[')]
  payloads.forEach((payload, index) => {
    if (index > 0) parts.push(Buffer.from(','))
    parts.push(typeof payload === 'string' ? Buffer.from(payload) : payload)
  })
  parts.push(Buffer.from(']'))
  return Buffer.concat(parts)
}
