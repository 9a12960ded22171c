import type { Network } from '../networks/createNetwork.ts'
import type { Head } from '../networks/HeadTracker.ts'

/** What a network accepts of a call's gas, besides 10x its block gas limit. */
export type GasCaps = Pick<Network, 'maxTransactionGas' | 'fillsTransactionGas'>

/**
 * docs/compatibility.md §7: eth_call / eth_estimateGas `gas` above what the network accepts is
 * lowered to it: 10x the latest block gas limit, or the network's per-transaction cap (EIP-7825)
 * where that is lower. A call without `gas` is sent with the cap once the network's nodes refused
 * their own default. Field reads only: this runs on every such call.
 */
export function capGas(params: unknown[], head: Head, caps: GasCaps): unknown[] {
  const call = params[0] as { gas?: unknown } | undefined
  const tenfold = head.gasLimit * 10n
  const { maxTransactionGas } = caps
  const cap = maxTransactionGas !== undefined && maxTransactionGas < tenfold ? maxTransactionGas : tenfold
  if (typeof call?.gas !== 'string') {
    if (!caps.fillsTransactionGas || typeof call !== 'object' || call === null || call.gas !== undefined) {
      return params
    }
  } else if (BigInt(call.gas) <= cap) return params
  const capped = [...params]
  capped[0] = { ...call, gas: `0x${cap.toString(16)}` }
  return capped
}
