import type { NodeError } from '../jsonrpc/readNodeError.ts'
import { isExecutionError } from './nodeErrors.ts'

/**
 * The per-transaction gas cap (EIP-7825) a node's refusal of a call's `gas` names, or undefined.
 * Read only from a node's own wording, from the start of its message and with its code: geth
 * (-32000 `transaction gas limit too high (cap: 16777216, tx: 30000000)`, after `err: ` in its
 * eth_call answers), Hardhat 3's JSON-RPC layer (-32000 `Transaction gas limit is 30000000 and
 * exceeds transaction gas cap of 16777216`), revm, so Hardhat 3's EVM, reth and anvil (-32000 or
 * -32003 `transaction gas limit (30000000) is greater than the cap (16777216)`). Never from an
 * execution error (a revert's reason is the contract's to write), and only a cap below the gas the
 * message quotes and not below minGasCap: a cap is kept for every later call of the network.
 */
export function gasCapOf(error: NodeError): bigint | undefined {
  const { code, message } = error
  if (typeof message !== 'string' || isExecutionError(error)) return undefined
  for (const { codes, pattern, capFirst } of gasCapWordings) {
    if (!codes.includes(code as number)) continue
    const match = pattern.exec(message)
    if (!match) continue
    const cap = BigInt(match[capFirst ? 1 : 2] as string)
    const sent = BigInt(match[capFirst ? 2 : 1] as string)
    return cap < sent && cap >= minGasCap ? cap : undefined
  }
  return undefined
}

/**
 * The lowest cap a node's refusal may set: 2^20, a sixteenth of EIP-7825's 2^24.
 * @internal exported for its tests
 */
export const minGasCap = 1n << 20n

/** Each node's refusal of gas over its cap: the codes it answers with, its message from the start. */
const gasCapWordings: readonly { codes: readonly number[]; pattern: RegExp; capFirst: boolean }[] = [
  {
    codes: [-32000],
    pattern: /^(?:err: )?transaction gas limit too high \(cap: (\d{1,20}), tx: (\d{1,20})\)/,
    capFirst: true,
  },
  {
    codes: [-32000],
    pattern: /^Transaction gas limit is (\d{1,20}) and exceeds transaction gas cap of (\d{1,20})/,
    capFirst: false,
  },
  {
    codes: [-32000, -32003],
    pattern: /^transaction gas limit \((\d{1,20})\) is greater than the cap \((\d{1,20})\)/,
    capFirst: false,
  },
]
