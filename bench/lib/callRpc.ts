import { type Dispatcher, request } from 'undici'

/** What a JSON-RPC endpoint answered: its result, or its error's message. */
export type RpcAnswer = { result: unknown } | { error: string }

/**
 * One JSON-RPC call to `url` (through `dispatcher`, undici's global agent by default): the answer,
 * an HTTP status other than 200 or a body that is not JSON-RPC as an error.
 */
export async function callRpc(
  url: string,
  method: string,
  params: unknown[],
  dispatcher?: Dispatcher,
): Promise<RpcAnswer> {
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    ...(dispatcher === undefined ? {} : { dispatcher }),
  })
  const text = await response.body.text()
  if (response.statusCode !== 200) return { error: `HTTP ${response.statusCode}: ${text.slice(0, 200)}` }
  let answer: { result?: unknown; error?: { message?: string } }
  try {
    answer = JSON.parse(text)
  } catch {
    return { error: `not JSON: ${text.slice(0, 200)}` }
  }
  if (answer.error !== undefined) return { error: answer.error.message ?? JSON.stringify(answer.error) }
  return { result: answer.result ?? null }
}

/** The result of a call that must succeed (the bench's own calls to the node). */
export async function resultOf(url: string, method: string, params: unknown[]): Promise<unknown> {
  const answer = await callRpc(url, method, params)
  if ('error' in answer) throw new Error(`${method}: ${answer.error}`)
  return answer.result
}
