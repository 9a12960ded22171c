/**
 * How large a parameter may be before any node is asked (docs/compatibility.md §7, "Parameter
 * limits"): each taken from geth, reth or the hosted service where they set one, and generous
 * enough that no real application meets it. Past a limit a call is -32602 naming it.
 */
export const paramLimits = {
  /** eth_feeHistory's block count: geth's and the hosted service's maximum. */
  feeHistoryBlocks: 1024,
  /** eth_feeHistory's reward percentiles: geth's maxQueryLimit. */
  rewardPercentiles: 100,
  /** Addresses of a log filter: geth's default of `--rpc.getlogmaxaddrs`. */
  filterAddresses: 1000,
  /** Topic positions of a log filter: geth's maxTopics (LOG4 has four). */
  topicPositions: 4,
  /** Alternatives (OR) in one topic position: geth's maxSubTopics. */
  topicAlternatives: 1000,
  /** eth_getProof's storage keys: geth's maxGetProofKeys. */
  proofKeys: 1024,
  /** eth_simulateV1 blockStateCalls: geth's maxSimulateBlocks. */
  simulateBlocks: 256,
  /** eth_simulateV1 calls in one block: geth's maxSimulateCallsPerBlock. */
  simulateCallsPerBlock: 5000,
  /** eth_simulateV1 calls in all its blocks: geth's maxSimulateTotalCalls. */
  simulateCalls: 10000,
  /** Accounts of one state override set. */
  overrideAccounts: 1000,
  /** Storage slots of one overridden account (`state` or `stateDiff`). */
  overrideSlots: 10000,
  /** Code of one overridden account: twice EIP-3860's init code limit (49,152 bytes). */
  overrideCodeBytes: 98304,
  /** Withdrawals of a block override (a mainnet block holds at most 16). */
  overrideWithdrawals: 1024,
  /** Block hashes of a block override (BLOCKHASH reaches 256 blocks back). */
  overrideBlockHashes: 256,
  /** Keys and items in all of a debug_trace* tracerConfig. */
  tracerConfigValues: 1024,
  /** Objects nested in a tracerConfig (muxTracer's configs of its tracers are the second level). */
  tracerConfigDepth: 3,
  /**
   * debug_trace*'s `timeout`: how long the node may run a tracer for one call (geth's default is
   * 5 s); longer keeps a node busy for the cost of one call.
   */
  traceTimeoutSeconds: 60,
  /** debug_trace*'s `reexec`: blocks the node may re-execute to rebuild state (geth's default). */
  traceReexecBlocks: 128,
  /** trace_get's trace address: no call tree is deeper than the EVM's 1024 calls. */
  traceAddressIndices: 1024,
  /** trace_filter's fromAddress and toAddress lists, each: as log filter addresses. */
  traceFilterAddresses: 1000,
  /** trace_filter's count. */
  traceFilterCount: 10000,
  /**
   * eth_sendRawTransactionSync's timeout, in milliseconds: geth's and erigon's longest wait for a
   * receipt (`--rpc.txsync.maxtimeout`). Also how long tollgate lets the node wait when the call
   * leaves the timeout to the node's default.
   */
  receiptTimeoutMs: 60_000,
} as const
