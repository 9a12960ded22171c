import type { Buffer } from 'node:buffer'
import type { RpcId } from './types.ts'

/** A whole answer (an error, usually) re-addressed to `id`. */
export function withId(answer: Buffer, id: RpcId): string {
  return JSON.stringify({ ...(JSON.parse(answer.toString()) as object), id })
}
