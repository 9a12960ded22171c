import type { Buffer } from 'node:buffer'

/**
 * A call's body with its `gas` at `cap`, for a node that refused it over its per-transaction gas
 * cap (EIP-7825), and whether the call had no `gas` of its own (`filled`: the node refused its own
 * default). Undefined when the body's gas is within the cap already, or the body is not a call with
 * a call object.
 */
export function toGasCappedBody(
  body: string | Buffer,
  cap: bigint,
): { body: string; filled: boolean } | undefined {
  let request: { params?: unknown }
  try {
    request = JSON.parse(body.toString()) as { params?: unknown }
  } catch {
    return undefined
  }
  const { params } = request
  if (!Array.isArray(params)) return undefined
  const call = params[0] as { gas?: unknown } | undefined
  if (typeof call !== 'object' || call === null) return undefined
  const { gas } = call
  if (typeof gas === 'string' && !(/^0x[0-9a-f]{1,16}$/i.test(gas) && BigInt(gas) > cap)) return undefined
  const capped = [...params]
  capped[0] = { ...call, gas: `0x${cap.toString(16)}` }
  return { body: JSON.stringify({ ...request, params: capped }), filled: gas === undefined }
}
