import { Buffer } from 'node:buffer'
import { answerMember, answerMemberOfText } from './answerMember.ts'

/** A JSON-RPC error object as a node wrote it: nothing in it is trusted to have its type. */
export type NodeError = { code?: unknown; message?: unknown; data?: unknown }

/** The largest answer read for an error by default: error objects are small, results are not parsed. */
const maxErrorBytes = 4096
const errorKey = Buffer.from('"error"')

/**
 * The error object of a node's answer, or undefined when it has none (or is longer than `maxBytes`).
 * Cheap for results, which is what nearly every answer is: the first member name among the first
 * bytes (`"result":`, answerMember) says so without a search through the answer; only a short
 * answer holding `"error"` is parsed.
 */
export function readNodeError(answer: Buffer | string, maxBytes = maxErrorBytes): NodeError | undefined {
  if (answer.length > maxBytes) return undefined
  // a string answer (the cache's, the gateway's own) is read as it is, never copied into bytes
  const text = typeof answer === 'string'
  const member = text ? answerMemberOfText(answer) : answerMember(answer)
  if (member > 0) return undefined
  if (member === 0 && (text ? !answer.includes('"error"') : answer.indexOf(errorKey) === -1)) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text ? answer : answer.toString())
  } catch {
    return undefined
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined
  const { error } = parsed as { error?: unknown }
  return typeof error === 'object' && error !== null ? (error as NodeError) : undefined
}
