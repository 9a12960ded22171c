export type JsonResponse = { status: number; headers: Headers; text: string; json: unknown }

/** POSTs a body (an object is JSON-encoded; a string is sent as is) and reads the JSON answer. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<JsonResponse> {
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await response.text()
  let json: unknown
  try {
    json = text === '' ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

export function rpcBody(method: string, params: unknown[] = [], id: number | string | null = 1) {
  return { jsonrpc: '2.0', id, method, params }
}
