import { randomBytes } from 'node:crypto'
import type { RpcPayload } from './types.ts'

/** Unguessable per process: a client's own string id never reads as a stand-in. */
const standInPrefix = `tollgate-raw-id-${randomBytes(8).toString('hex')}-`
const standIn = new RegExp(`"${standInPrefix}(\\d+)"`, 'g')

/**
 * The string that stands for the `index`th id of a request whose text JSON.parse and JSON.stringify
 * would not give back (parseRpcRequest): it travels through the pipeline, to the node and back, as
 * any string id does, and withRawIds writes the client's text in its place.
 */
export const toRawIdStandIn = (index: number): string => `${standInPrefix}${index}`

/** The answer with each stand-in id written back as the client wrote it (`rawIds`, by index). */
export function withRawIds(payload: RpcPayload, rawIds: readonly string[]): RpcPayload {
  if (payload === '') return payload
  return payload.toString().replace(standIn, (found, index: string) => rawIds[Number(index)] ?? found)
}
