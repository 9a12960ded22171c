import type { NodeError } from '../jsonrpc/readNodeError.ts'
import { speaksOfRangeLimit } from './speaksOfRangeLimit.ts'

/**
 * What a node means when it answers a JSON-RPC error that is not the client's answer: the one
 * table of "cannot answer now" errors of the node clients and hosted providers tollgate may sit
 * in front of (docs/compatibility.md §7). Everything the table does not name is an answer and goes
 * to the client as the node wrote it.
 *
 * - `capacity`: the node refuses for now (rate limit, quota, load). Another upstream is asked; the
 *   refusal counts against the node's health like an HTTP 429 (breaker included); if every upstream
 *   refuses, the client gets a 503, as for an HTTP 429: the node's quota is not the client's.
 * - `missingData`: the node does not have the block or state (behind, pruned, not synced). Another
 *   upstream is asked; it counts against the node's error rate (so nodes that have the data go
 *   first), not its breaker (the node still answers everything else); if no upstream has the data,
 *   the client gets the last node's error, which says what is missing.
 * - `refused`: this node's own limit on this request (block range, result size) or a method it
 *   does not serve. Another upstream is asked; it says nothing of the node's health; if every
 *   upstream refuses, the client gets the last node's error.
 */
export type NodeErrorKind = 'capacity' | 'missingData' | 'refused'

export type NodeErrorRule = {
  kind: NodeErrorKind
  /** Who answers it, as found in their source or their users' reports. */
  source: string
  /** Only with this JSON-RPC code (where the message alone would say too little). */
  code?: number
  /**
   * Matched against the message (a pattern, or a reading of its meaning: speaksOfRangeLimit); a rule
   * with a code and no message takes every message.
   */
  message?: Pick<RegExp, 'test'>
  /** An eth_getLogs refusal of its block range or of its answer's size: a smaller range may be answered. */
  splitsRange?: true
}

/**
 * In order: the first rule that matches decides.
 * @internal exported for its tests
 */
export const nodeErrorRules: readonly NodeErrorRule[] = [
  // limits of one node or provider on this request: another may answer it. An eth_getLogs refusal
  // of its block range or answer size (`splitsRange`) is one tollgate may split when every upstream
  // says it (src/pipeline/splitLogsRange.ts; the chunk size read by readRangeLimit.ts)
  {
    kind: 'refused',
    source: 'Infura, zkSync (-32005), and tollgate itself',
    message: /query returned more than \d+ results/i,
    splitsRange: true,
  },
  {
    kind: 'refused',
    source:
      'Alchemy (-32602 `Log response size exceeded`, -32600 `You can make eth_getLogs requests with up to a 500 block range`, `Under the Free tier plan, … up to a 10 block range`)',
    message: /log response size exceeded|this block range should work|eth_getLogs requests with up to an? /i,
    splitsRange: true,
  },
  {
    kind: 'refused',
    source:
      'QuickNode and rpc.blast.io (-32614 `eth_getLogs is limited to a 10,000 range`, also as HTTP 413), 1RPC (`eth_getLogs is limited to 0 - 50 blocks range`)',
    message: /eth_getLogs (and eth_newFilter )?(is|are) limited/i,
    splitsRange: true,
  },
  {
    kind: 'refused',
    source: 'dRPC (code 35 `ranges over 1000 blocks are not supported on freetier`)',
    message: /ranges over \d+ blocks are not supported/i,
    splitsRange: true,
  },
  {
    kind: 'refused',
    source: 'besu (-32005 `Requested range exceeds maximum RPC range limit`, `--rpc-max-logs-range`)',
    message: /requested range exceeds maximum (rpc )?range limit/i,
    splitsRange: true,
  },
  {
    kind: 'refused',
    source:
      'reth and Base (-32602 `query exceeds max block range 100000`, `query exceeds max results 20000, retry with the range A-B`), LlamaRPC, Ankr',
    message: /query exceeds max (block range|results)/i,
    splitsRange: true,
  },
  {
    kind: 'refused',
    source:
      'erigon (`--rpc.blockrange.limit`: `query block range exceeds server limit, narrow your filter: N`; `--rpc.logs.maxresults`: `query returns too many logs, narrow your filter: N`)',
    message: /block range exceeds server limit|returns too many logs/i,
    splitsRange: true,
  },
  {
    kind: 'refused',
    source:
      'Ankr (-32600 `block range is too wide`, `maximum [from, to] blocks distance: 10000`), Cloudflare (`Max range: 800`), Chainstack (`Block range limit exceeded.`), Infura (-32602 `range 1000000 exceeds limit of 10000`), Coinbase (`please limit the query to at most N blocks`), thirdweb (`Maximum allowed number of requested blocks is N`), Avalanche (`requested too many blocks from A to B, maximum is set to N`), Blast (`exceeds the range allowed for your plan (N > M)`)',
    message:
      /blocks distance: \d+|max range: \d+|block range limit exceeded|range \d+ exceeds limit of \d+|limit the query to at most [\d,.]+ blocks|number of requested blocks is \d+|requested too many blocks|exceeds the range allowed for your plan/i,
    splitsRange: true,
  },
  {
    kind: 'refused',
    source:
      'geth `--rpc.rangelimit`, BSC, PublicNode (`exceed maximum block range: 50000`), Moonbeam/Frontier (`block range is too wide (maximum 1024)`), Optimism (`Block range is too large`), Scroll (`block range is bigger than maxBlockRange`), Morph (`block range is larger than max block range, block range = 5120, max block range = 5000`), hosted providers (block range limits)',
    message:
      /block range (is )?too (large|wide|high)|block range is (bigger|larger) than|range (is )?too large|exceed(s|ed)? (the )?max(imum)? block range|max(imum)? block range (exceeded|is)/i,
    splitsRange: true,
  },
  {
    kind: 'refused',
    source:
      'geth (-32003 `response too large`), proxyd (`backend response too large`), Arbitrum (`logs matched by query exceeds limit of 10000`), 1RPC (`response size should not greater than N bytes`)',
    message:
      /^(backend )?response too large|logs matched by query exceeds limit|response size should not greater/i,
    splitsRange: true,
  },
  {
    kind: 'refused',
    source:
      'any other node or proxy whose refusal speaks of a block range or a result limit, read by its meaning (speaksOfRangeLimit): proxyd (HTTP 400, -32602 `block range greater than 1000 max`), and wordings nobody listed yet',
    message: { test: speaksOfRangeLimit },
    splitsRange: true,
  },
  { kind: 'refused', source: 'every client: a method this node does not serve', code: -32601 },

  // the node refuses for now
  {
    kind: 'capacity',
    source:
      'Infura (`daily request count exceeded, request rate limited`, `project ID request rate exceeded`), EIP-1474 `limit exceeded`',
    code: -32005,
  },
  {
    kind: 'capacity',
    source: 'Alchemy (429 `Your app has exceeded its compute units per second capacity`)',
    code: 429,
  },
  {
    kind: 'capacity',
    source:
      'QuickNode (-32007 `N/second request limit reached - reduce calls per second or upgrade your account at quicknode.com`, -32012 `credits limited to N/sec`)',
    message: /request limit reached|credits limited/i,
  },
  {
    kind: 'capacity',
    source: 'Alchemy (`Monthly capacity limit exceeded`), other hosted providers',
    message: /capacity (limit )?exceeded|exceeded its compute units|reached the free tier/i,
  },
  {
    kind: 'capacity',
    source: 'hosted providers and proxies in general',
    message:
      /rate limit|too many requests|request count exceeded|request rate exceeded|exceeded the quota|reached the quota|under too much load/i,
  },
  {
    kind: 'capacity',
    source: 'geth (-32002, the server is over its own timeout)',
    message: /^request timed out/i,
  },

  // the node does not have the data
  { kind: 'missingData', source: 'geth, reth, erigon (-32000)', message: /header not found/i },
  { kind: 'missingData', source: 'geth (-32000), pruned or not synced state', message: /missing trie node/i },
  {
    kind: 'missingData',
    source: 'geth (`required historical state unavailable`, `historical state 0x… is not available`)',
    message: /historical state (.* )?(unavailable|is not available)/i,
  },
  {
    kind: 'missingData',
    source: 'reth (`state at block #N is pruned`)',
    message: /state at block #?\d+ is pruned/i,
  },
  { kind: 'missingData', source: 'erigon', message: /old data not available due to pruning/i },
  {
    kind: 'missingData',
    source: 'nethermind (-32002 `No state available for block 0x…`)',
    message: /no state available for block/i,
  },
  { kind: 'missingData', source: 'besu (-32000)', message: /world state unavailable/i },
  {
    kind: 'missingData',
    source:
      'anvil (-32602 `BlockOutOfRangeError: block height is 300 but requested was 50`: state it pruned, `--prune-history`, or a block above its head)',
    message: /BlockOutOfRangeError|block height is \d+ but requested was \d+/i,
  },
  {
    kind: 'missingData',
    source:
      'geth, reth, nethermind (4444 `pruned history unavailable`, nethermind `Pruned history unavailable for block …`: EIP-4444 history expiry)',
    code: 4444,
  },
  {
    kind: 'missingData',
    source:
      'reth (-32001 `block not found: number 0x…` / `hash 0x…`), erigon (`block not found: N`), besu (-32000 `Block not found`)',
    message: /^block not found/i,
  },
  {
    kind: 'missingData',
    source:
      'nethermind (-39001 `Unknown block error`: no finalized or safe block yet), geth and anvil (-32000 `unknown block`: eth_getLogs by a block hash it does not have)',
    message: /^unknown block( error)?$/i,
  },
  {
    kind: 'missingData',
    source: 'anvil (-32001 `Resource not found`: state at a block hash it does not have), EIP-1474',
    code: -32001,
    message: /^resource not found$/i,
  },
  {
    kind: 'missingData',
    source: 'geth (a node without the tag yet: not synced, or before the merge)',
    message: /^(pending block is not available|(finalized|safe) block not found)/i,
  },
]

/**
 * The kind of a node's error answer, or undefined when it is the client's answer: any execution
 * error (a revert, code 3, `execution reverted`, nethermind's `VM execution error`), and anything
 * the table does not name (invalid params the node rightly refused, insufficient funds, ...).
 * Execution errors are answers whatever their text says: a revert reason may read "rate limit".
 */
export function classifyNodeError(error: NodeError): NodeErrorKind | undefined {
  return findNodeErrorRule(error)?.kind
}

/** The table's rule for a node's error answer, or undefined when it is the client's answer (classifyNodeError). */
export function findNodeErrorRule(error: NodeError): NodeErrorRule | undefined {
  if (isExecutionError(error)) return undefined
  const message = typeof error.message === 'string' ? error.message : ''
  for (const rule of nodeErrorRules) {
    if (rule.code !== undefined && rule.code !== error.code) continue
    if (rule.message && !rule.message.test(message)) continue
    return rule
  }
  return undefined
}

/**
 * An execution error, whatever its text (code 3, `execution reverted`, nethermind's `VM execution
 * error`, Hardhat's `VM Exception`): the contract's answer, which a contract author words.
 */
export function isExecutionError({ code, message }: NodeError): boolean {
  return (
    code === 3 || (typeof message === 'string' && /revert|vm execution error|vm exception/i.test(message))
  )
}

/**
 * The block a node's refusal for want of data names, or undefined: anvil (`block height is 300 but
 * requested was 50`), reth (`state at block #50 is pruned`, `block not found: number 0x32`).
 */
export function missingBlockOf(error: NodeError): bigint | undefined {
  if (typeof error.message !== 'string') return undefined
  const match = missingBlockMessage.exec(error.message)
  const digits = match?.[1] ?? match?.[2] ?? match?.[3]
  return digits === undefined ? undefined : BigInt(digits)
}

const missingBlockMessage =
  /requested was (\d{1,20})\b|state at block #?(\d{1,20}) is pruned|^block not found: number (0x[0-9a-f]{1,16})\b/i
