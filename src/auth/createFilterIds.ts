import { Buffer } from 'node:buffer'
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { CallGuard } from './authorize.ts'

/**
 * Who a filter belongs to: the key, the network, and the contract allowlists it was made under
 * (the key's and its JWT's; none when the request had the secret or the key has none).
 */
export type FilterOwner = { keyId: number; network: string; guard: CallGuard | undefined }

export type FilterIds = {
  /** The id the client gets for the node's filter id: still 0x hex, sealed to its owner. */
  seal(nodeId: string, owner: FilterOwner): string
  /** The node's filter id inside a client's id, or undefined when `owner` did not make it. */
  open(clientId: string, owner: FilterOwner): string | undefined
}

/** Hex characters of the seal at the end of each id (128 bits). */
const sealHexChars = 32
const hexId = /^0x[0-9a-fA-F]+$/

/**
 * Filter ids that prove their owner (docs/compatibility.md §4), with no state shared between
 * instances: the id a client gets is the node's id followed by a MAC of (the key, the network, the
 * node's id, the contract allowlists) under a key derived from the database's secret hash key
 * (hashSecret.ts), which every instance and the CLI share. An id another key made, an id no key
 * made, and an id made under other contract allowlists (the key's changed since, or another JWT's)
 * do not open: the call answers as the node answers an unknown filter, and is not forwarded.
 */
export function createFilterIds(secretHashKey: Buffer): FilterIds {
  // its own key, so that no seal is ever also a secret's hash
  const macKey = createHmac('sha256', secretHashKey).update('tollgate filter ids').digest()

  function mac(nodeId: string, owner: FilterOwner): Buffer {
    return createHmac('sha256', macKey)
      .update(`${owner.keyId}\n${owner.network}\n${nodeId.toLowerCase()}\n${contractsOf(owner.guard)}`)
      .digest()
      .subarray(0, sealHexChars / 2)
  }

  return {
    seal(nodeId, owner) {
      return `${nodeId}${mac(nodeId, owner).toString('hex')}`
    },
    open(clientId, owner) {
      if (clientId.length <= 2 + sealHexChars || !hexId.test(clientId)) return undefined
      const nodeId = clientId.slice(0, -sealHexChars)
      const sent = Buffer.from(clientId.slice(-sealHexChars), 'hex')
      return timingSafeEqual(sent, mac(nodeId, owner)) ? nodeId : undefined
    },
  }
}

/** The contract allowlists as one string: each sorted, in the guard's order (the key's, then the JWT's). */
function contractsOf(guard: CallGuard | undefined): string {
  if (guard === undefined) return ''
  return guard.contracts.map((contracts) => [...contracts].sort().join(',')).join(';')
}
