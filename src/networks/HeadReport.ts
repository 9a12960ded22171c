import { isQuantity } from '../upstreams/fetchBlock.ts'
import type { Header } from './createHeadChain.ts'

/**
 * What the instance that polls a network's head tells the others of a fleet (createFleetHeads): the
 * head it gave its chain last, and what it knows beside, so that they follow without polling.
 */
export type HeadReport = {
  /** The newest head its tracker gave the chain of heads, as it gave it. */
  header: Header
  /** Given as the chain going back (a rewind the upstreams agree on): the follower's chain asks the node too. */
  goesBack: boolean
  finalized: bigint | undefined
  /** The chain's genesis block hash. */
  genesis: string | undefined
  /** The gas limit of the newest block it heard of. */
  gasLimit: bigint | undefined
  /**
   * The heads of its members in use, by member key (toMemberKeys): a follower's members of the same
   * key take them as their heads (for lag routing), and are not polled.
   */
  members: ReadonlyMap<string, bigint>
}

/**
 * A report longer than this is refused (a header with its transaction hashes is far smaller).
 * @internal exported for its tests
 */
export const maxReportChars = 1_048_576
/** Members beyond this many in a report are refused. */
const maxMembers = 256

const hashPattern = /^0x[0-9a-fA-F]{64}$/

const toHex = (value: bigint | undefined) => (value === undefined ? undefined : `0x${value.toString(16)}`)

export function toHeadReportText(report: HeadReport): string {
  return JSON.stringify({
    header: report.header,
    goesBack: report.goesBack,
    finalized: toHex(report.finalized),
    genesis: report.genesis,
    gasLimit: toHex(report.gasLimit),
    members: Object.fromEntries([...report.members].map(([key, head]) => [key, toHex(head)])),
  })
}

/** A report as another instance sent it through Redis; throws on anything else. */
export function parseHeadReport(text: string): HeadReport {
  if (text.length > maxReportChars) throw new Error('a head report too long')
  const raw = JSON.parse(text) as Record<string, unknown>
  if (typeof raw !== 'object' || raw === null) throw new Error('a head report that is not an object')
  const { header, goesBack, members } = raw
  if (!isReportedHeader(header)) throw new Error('a head report without a block header')
  if (typeof goesBack !== 'boolean') throw new Error('a head report without goesBack')
  if (typeof members !== 'object' || members === null || Array.isArray(members))
    throw new Error('a head report without members')
  const entries = Object.entries(members)
  if (entries.length > maxMembers) throw new Error('a head report with too many members')
  const heads = new Map<string, bigint>()
  for (const [key, head] of entries) {
    if (!isQuantity(head)) throw new Error('a head report with a member head that is not a number')
    heads.set(key, BigInt(head))
  }
  return {
    header,
    goesBack,
    finalized: optionalQuantity(raw.finalized, 'finalized'),
    genesis: optionalHash(raw.genesis),
    gasLimit: optionalQuantity(raw.gasLimit, 'gasLimit'),
    members: heads,
  }
}

function isReportedHeader(value: unknown): value is Header {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const { number, hash, parentHash } = value as Record<string, unknown>
  return (
    isQuantity(number) &&
    typeof hash === 'string' &&
    hashPattern.test(hash) &&
    typeof parentHash === 'string' &&
    hashPattern.test(parentHash)
  )
}

function optionalQuantity(value: unknown, name: string): bigint | undefined {
  if (value === undefined) return undefined
  if (!isQuantity(value)) throw new Error(`a head report whose ${name} is not a number`)
  return BigInt(value)
}

function optionalHash(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string' || !hashPattern.test(value))
    throw new Error('a head report whose genesis is not a hash')
  return value
}
