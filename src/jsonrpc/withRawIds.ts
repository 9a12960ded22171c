import { Buffer } from 'node:buffer'
import { randomBytes } from 'node:crypto'
import { AnswerParts } from './AnswerParts.ts'
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

/**
 * How far from either end of an answer's part its id may be: a response object's members besides
 * its id are `jsonrpc` (short) and one `result` or `error` (of any length), so whichever order a
 * node writes them in, the id is among the first or the last few bytes of its answer.
 */
const idWindowBytes = 4096

/**
 * The answer with each stand-in id written back as the client wrote it (`rawIds`, by index). Only
 * the ends of each part are read (idWindowBytes): a large answer is neither joined nor searched
 * through, and keeps its bytes as they are.
 */
export function withRawIds(payload: RpcPayload, rawIds: readonly string[]): RpcPayload {
  if (payload === '') return payload
  const bytes = payload instanceof AnswerParts ? payload.byteLength : payload.length
  if (bytes <= 2 * idWindowBytes) return replaced(payload.toString(), rawIds)
  const parts = payload instanceof AnswerParts ? payload.parts : [Buffer.from(payload)]
  return new AnswerParts(parts.flatMap((part) => partWithRawIds(part, rawIds)))
}

/** One part with the stand-ins at its ends replaced: small parts whole, large ones at each end. */
function partWithRawIds(part: Buffer, rawIds: readonly string[]): Buffer[] {
  if (part.length <= 2 * idWindowBytes) return [replacedBytes(part, rawIds)]
  return [
    replacedBytes(part.subarray(0, idWindowBytes), rawIds),
    part.subarray(idWindowBytes, part.length - idWindowBytes),
    replacedBytes(part.subarray(part.length - idWindowBytes), rawIds),
  ]
}

/** Latin-1 keeps every byte as it is (stand-ins and raw ids are ASCII); untouched bytes stay the same buffer. */
function replacedBytes(bytes: Buffer, rawIds: readonly string[]): Buffer {
  const text = bytes.toString('latin1')
  const written = replaced(text, rawIds)
  return written === text ? bytes : Buffer.from(written, 'latin1')
}

function replaced(text: string, rawIds: readonly string[]): string {
  return text.replace(standIn, (found, index: string) => rawIds[Number(index)] ?? found)
}
