/** How a logged call ended: answered, failed (an error of the node's, the upstreams' or its input), or refused by its key's limits and rules. */
export type RequestOutcome = 'ok' | 'error' | 'refused'

export const requestOutcomes: readonly RequestOutcome[] = ['ok', 'error', 'refused']

/** One logged call (an element of a batch is one call): never a URL, never params unless the operator keeps them. */
export type RequestLogRow = {
  timeMs: number
  accountId: number
  keyId: number
  network: string
  method: string
  outcome: RequestOutcome
  /** The HTTP status the call was answered with (a batch element: the status it would have alone). */
  status: number
  /** The JSON-RPC error code; null for a result. */
  code: number | null
  /** The error's name (`RateLimitError`, `NodeError` for a node's error answer); null for a result. */
  error: string | null
  /** What the error said (its message, a 402's or 429's details), cut short; null for a result. */
  reason: string | null
  credits: number
  durationMs: number
  cacheHit: boolean
  /** The upstream's configured name (else `#N`), `partner` for a partner provider; null when none was asked. */
  upstream: string | null
  /** Cut to its /24 or /48 unless the operator keeps it whole. */
  clientAddress: string | null
  userAgent: string | null
  /** Kept only when the operator turns params on, cut short. */
  params: string | null
  answer: string | null
}

export type StoredRequestLogRow = RequestLogRow & { id: number }

/** Where a page of rows ends: the next page is the rows before this one (newest first). */
export type RequestLogCursor = { timeMs: number; id: number }

/** Which rows to read: an account's (the operator may read every account's), newest first. */
export type RequestLogQuery = {
  /** Undefined: every account (the operator's reads only). */
  accountId: number | undefined
  /** Undefined: every key; empty: none. */
  keyIds: readonly number[] | undefined
  network: string | undefined
  method: string | undefined
  outcome: RequestOutcome | undefined
  fromMs: number | undefined
  toMs: number | undefined
  before: RequestLogCursor | undefined
  limit: number
}

/** Errors and refused calls counted by what they were. */
export type FailureCount = {
  outcome: Exclude<RequestOutcome, 'ok'>
  status: number
  code: number | null
  error: string | null
  reason: string | null
  calls: number
}

/** Durations of the successful calls logged (the sample): how many, and their 50th and 99th percentile. */
export type LatencySummary = { sampledCalls: number; p50Ms: number | null; p99Ms: number | null }

export type RequestLogStore = {
  /** Writes rows, in one transaction. */
  add(rows: readonly RequestLogRow[]): Promise<void>
  read(query: RequestLogQuery): Promise<StoredRequestLogRow[]>
  /** An account's failures since `fromMs`, most frequent first (at most `maxGroups`), and its latency. */
  summarize(
    accountId: number,
    fromMs: number,
    maxGroups: number,
  ): Promise<{ failures: FailureCount[]; latency: LatencySummary }>
  /**
   * Deletes rows older than `olderThanMs`, and each account's oldest beyond `rowsPerAccount`: safe
   * to run from many processes at once (each delete is decided in the database). Answers the rows deleted.
   */
  prune(olderThanMs: number, rowsPerAccount: number): Promise<number>
}
