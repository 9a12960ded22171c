import type { Head } from '../networks/createHeadTracker.ts'

/** docs/compatibility.md §7: eth_call / eth_estimateGas `gas` above 10x the latest block gas limit is lowered to that cap. */
export function capGas(params: unknown[], head: Head): unknown[] {
  const call = params[0] as { gas?: unknown } | undefined
  if (typeof call?.gas !== 'string') return params
  const cap = head.gasLimit * 10n
  if (BigInt(call.gas) <= cap) return params
  const capped = [...params]
  capped[0] = { ...call, gas: `0x${cap.toString(16)}` }
  return capped
}
