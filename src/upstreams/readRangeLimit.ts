/**
 * What an eth_getLogs range refusal says of the range a node would answer (the refusals are the
 * `splitsRange` rules of nodeErrors.ts):
 * - `suggestedBlocks`: the width of the range it suggests for this query (Infura's and zkSync's
 *   `Try with this block range [0x…, 0x…]`, Alchemy's `this block range should work: [0x…, 0x…]`,
 *   reth's `retry with the range A-B`), which depends on how many logs the blocks hold;
 * - `limitBlocks`: the widest range it answers whatever the query (dRPC's `ranges over 1000 blocks`,
 *   Alchemy's `up to a 2K block range`, QuickNode's `limited to a 10,000 range`, ...).
 * Both are counted as blocks from `fromBlock` to `toBlock` inclusive, the narrower reading where a
 * provider counts `toBlock - fromBlock`. Neither, when the refusal names no width (besu, Chainstack,
 * result and size limits): the range is then halved.
 * - `bySize`: the refusal is of the answer's size (its logs or bytes: Infura's `more than 10000
 *   results`, geth's `response too large`), not of the range itself, so the width that fits depends
 *   on how many logs the query's blocks hold for its filter.
 */
export type RangeLimit = { suggestedBlocks?: bigint; limitBlocks?: bigint; bySize?: true }

/** Refusals of the answer's size: results (`more than 10000 results`, `max results`), logs (`too many logs`, `logs matched`), bytes (`response too large`, `Log response size exceeded`). */
const sizeRefusal = /\bresults\b|\blogs\b|\bresponse\b/i

/** `[0x…, 0x…]` (Infura, zkSync, Alchemy), or reth's decimal `retry with the range A-B`. */
const suggestedRanges: readonly RegExp[] = [
  /\[\s*(0x[0-9a-f]{1,16})\s*,\s*(0x[0-9a-f]{1,16})\s*\]/i,
  /retry with the range (\d{1,20})\s*-\s*(\d{1,20})/i,
]

/** A width the refusal states, with its source; the first that matches is read. */
const statedLimits: readonly RegExp[] = [
  // Alchemy: `up to a 2K block range`, `up to a 500 block range`, `up to a 10 block range`
  /up to an? (\d[\d,.]*)(k?) block range/i,
  // QuickNode, rpc.blast.io: `limited to a 10,000 range`, `limited to a 10,000 blocks range`; 1RPC: `limited to 0 - 50 blocks range`
  /limited to (?:an? |\d+ - )?(\d[\d,.]*)()(?: blocks?)? range/i,
  // dRPC: `ranges over 1000 blocks are not supported on freetier`
  /ranges over (\d[\d,.]*)() blocks/i,
  // reth: `query exceeds max block range 100000`; geth --rpc.rangelimit, BSC, PublicNode: `exceed maximum block range: 50000`;
  // Morph: `…, max block range = 5000`
  /max(?:imum)? block range\s*[:=]?\s*(\d[\d,.]*)()/i,
  // erigon: `query block range exceeds server limit, narrow your filter: 1000`
  /block range exceeds server limit, narrow your filter: (\d+)()/i,
  // Moonbeam/Frontier: `block range is too wide (maximum 1024)`
  /too wide \(maximum (\d+)()\)/i,
  // Ankr: `maximum [from, to] blocks distance: 10000`; Cloudflare: `Max range: 800`
  /blocks distance: (\d+)()|max range: (\d+)()/i,
  // Infura: `range 1000000 exceeds limit of 10000`
  /range \d+ exceeds limit of (\d+)()/i,
  // Coinbase: `please limit the query to at most 1000 blocks`; thirdweb: `Maximum allowed number of requested blocks is 1000`
  /at most (\d[\d,.]*)() blocks|number of requested blocks is (\d+)()/i,
  // Avalanche: `requested too many blocks from 1 to 5000, maximum is set to 2048`
  /maximum is set to (\d+)()/i,
  // Blast: `exceeds the range allowed for your plan (5000 > 500)`
  /range allowed for your plan \(\d+ > (\d+)()\)/i,
]

/**
 * A width read by its meaning, in a refusal of the range (not of the answer's size, whose numbers
 * count results or bytes) that none of statedLimits reads: the number a limit's words give, proxyd's
 * `block range greater than 1000 max`, `range limit is 2000`, `at most 500 blocks`, `max: 10000`.
 */
const limitByMeaning =
  /(?:(?:greater|larger|bigger|wider|more|longer) than|\bmax(?:imum)?|\blimit(?: of| is)?|\bat most|\bup to)\s*[:=]?\s*(\d[\d,]*)()/i

const rangeLimits = [...statedLimits, limitByMeaning]

/** The widths a range refusal's message states, and whether it refuses the answer's size (see RangeLimit); an empty object when it states neither. */
export function readRangeLimit(message: string): RangeLimit {
  const limit: RangeLimit = {}
  if (sizeRefusal.test(message)) limit.bySize = true
  for (const pattern of suggestedRanges) {
    const match = pattern.exec(message)
    if (!match) continue
    const from = BigInt(match[1] as string)
    const to = BigInt(match[2] as string)
    if (to >= from) limit.suggestedBlocks = to - from + 1n
    break
  }
  for (const pattern of limit.bySize ? statedLimits : rangeLimits) {
    const match = pattern.exec(message)
    if (!match) continue
    // alternations put the number in the first group that matched, the K suffix beside it
    const at = match.findIndex((group, index) => index > 0 && group !== undefined)
    const digits = (match[at] as string).replace(/[,.]/g, '')
    if (digits.length === 0 || digits.length > 12) break
    const blocks = BigInt(digits) * (match[at + 1]?.toLowerCase() === 'k' ? 1000n : 1n)
    if (blocks > 0n) limit.limitBlocks = blocks
    break
  }
  return limit
}
