/** One block's fee data, as eth_feeHistory reports it. */
export type FeeBlock = {
  number: number
  baseFee: bigint
  gasUsedRatio: number
  /** Priority fees at `rewardPercentiles`, in wei. */
  rewards: bigint[]
}

/** The percentiles of priority fees kept per block: 0 and 100 give each block's range. */
export const rewardPercentiles = [0, 10, 20, 30, 100] as const

/** Whether the block carries transactions (every transaction uses gas); an empty block has no tips. */
export function hasTransactions(block: FeeBlock): boolean {
  return block.gasUsedRatio > 0
}

/** Where the fee-history indexer keeps what it has fetched, per chain id. */
export type FeeHistoryStore = {
  /** The last `count` stored blocks at or below `head`, oldest first. */
  latest(chainId: number, head: number, count: number): Promise<FeeBlock[]>
  /** Stored block numbers in [from, to], ascending. */
  storedNumbers(chainId: number, from: number, to: number): Promise<number[]>
  upsert(chainId: number, blocks: FeeBlock[]): Promise<void>
  /** Removes blocks numbered `from` and above (a reorg replaced them). */
  deleteFrom(chainId: number, from: number): Promise<void>
  /** Removes blocks below `number` (they left the window). */
  deleteBelow(chainId: number, number: number): Promise<void>
  /** Hashes of observed heads, to tell a reorg. */
  getHeadHashes(chainId: number): Promise<Map<number, string>>
  setHeadHash(chainId: number, number: number, hash: string, keep: number): Promise<void>
  /** The next block's base fee as the node computed it, with the head it follows. */
  getNextBaseFee(chainId: number): Promise<{ head: number; baseFee: bigint } | undefined>
  setNextBaseFee(chainId: number, head: number, baseFee: bigint): Promise<void>
}
