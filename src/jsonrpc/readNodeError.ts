import { Buffer } from 'node:buffer'

/** A JSON-RPC error object as a node wrote it: nothing in it is trusted to have its type. */
export type NodeError = { code?: unknown; message?: unknown; data?: unknown }

/** The largest answer read for an error by default: error objects are small, results are not parsed. */
const maxErrorBytes = 4096
/** Where nodes write the member that says result or error: after `"jsonrpc"` and `"id"`. */
const headBytes = 128
const errorKey = Buffer.from('"error"')

/**
 * The error object of a node's answer, or undefined when it has none (or is longer than `maxBytes`).
 * Cheap for results, which is what nearly every answer is: the first member name among the first
 * bytes (`"result":`) says so without a search through the answer; only a short answer holding
 * `"error"` is parsed.
 */
export function readNodeError(answer: Buffer | string, maxBytes = maxErrorBytes): NodeError | undefined {
  if (answer.length > maxBytes) return undefined
  // a string answer (the cache's, the gateway's own) is read as it is, never copied into bytes
  const text = typeof answer === 'string'
  const member = text ? firstMemberOfText(answer) : firstMember(answer)
  if (member === 'result') return undefined
  if (member === undefined && (text ? !answer.includes('"error"') : answer.indexOf(errorKey) === -1))
    return undefined
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

/**
 * `"result":` or `"error":`, whichever comes first in the answer's first bytes (a byte loop: no
 * search, no copy); a name must end within them.
 */
function firstMember(body: Buffer): 'result' | 'error' | undefined {
  const end = Math.min(body.length, headBytes)
  for (let i = 0; i + errorName.length < end; i++) {
    if (body[i] !== quote) continue
    if (i + resultName.length < end && matches(body, i + 1, resultName)) return 'result'
    if (matches(body, i + 1, errorName)) return 'error'
  }
  return undefined
}

/** firstMember of an answer's text: the same characters, at the same places, for text that is ASCII there. */
function firstMemberOfText(text: string): 'result' | 'error' | undefined {
  const end = Math.min(text.length, headBytes)
  for (let i = 0; i + errorName.length < end; i++) {
    if (text.charCodeAt(i) !== quote) continue
    if (i + resultName.length < end && text.startsWith(resultText, i + 1)) return 'result'
    if (text.startsWith(errorText, i + 1)) return 'error'
  }
  return undefined
}

/** `"result":` and `"error":` without the opening quote. */
const resultText = 'result":'
const errorText = 'error":'
const resultName = Buffer.from(resultText)
const errorName = Buffer.from(errorText)
const quote = 0x22

function matches(body: Buffer, at: number, name: Buffer): boolean {
  for (let j = 0; j < name.length; j++) if (body[at + j] !== name[j]) return false
  return true
}
