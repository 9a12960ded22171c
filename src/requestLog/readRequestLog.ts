import type { ApiKey } from '../auth/apiKey.ts'
import { AdminRequestError } from '../errors/adminErrors.ts'
import { parseWholeNumber } from '../metering/parseWholeNumber.ts'
import {
  type RequestLogCursor,
  type RequestLogQuery,
  type RequestLogStore,
  type RequestOutcome,
  requestOutcomes,
  type StoredRequestLogRow,
} from './requestLogStore.ts'

/** What reading the log needs: the rows, this process's pending ones written first, and the operator's settings. */
export type RequestLogReader = {
  store: RequestLogStore
  /** Writes the rows this process holds, so an answer includes the latest calls (none when the log is off). */
  flush(): Promise<void>
  /** `requestLog.days` and `sampleRate`, as the summary tells them. */
  days: number
  sampleRate: number
}

/** A page of JSON rows (`limit`), and an NDJSON export (at most this many rows a request: page on with `before`). */
const pageRows = { min: 1, max: 1000, fallback: 100 }
const exportRows = { min: 1, max: 10_000, fallback: 10_000 }
/** The longest network or method name a filter takes. */
const maxFilterChars = 200
/** Groups of failures a summary lists at most (most frequent first). */
const maxSummaryGroups = 100

/** An answer that is text of its own type (the NDJSON export), not JSON. */
export class TextAnswer {
  constructor(
    readonly contentType: string,
    readonly text: string,
    readonly headers: Record<string, string>,
  ) {}
}

/** A logged call as the account API, the admin API and the pages show it: its key by name and value, times in ISO. */
function toRequestView(row: StoredRequestLogRow, keysById: ReadonlyMap<number, ApiKey>) {
  const key = keysById.get(row.keyId)
  return {
    time: new Date(row.timeMs).toISOString(),
    account: key?.account.name ?? null,
    keyName: key?.name ?? null,
    key: key?.key ?? null,
    network: row.network,
    method: row.method,
    outcome: row.outcome,
    status: row.status,
    code: row.code,
    error: row.error,
    reason: row.reason,
    credits: row.credits,
    durationMs: row.durationMs,
    cacheHit: row.cacheHit,
    upstream: row.upstream,
    clientAddress: row.clientAddress,
    userAgent: row.userAgent,
    ...(row.params === null ? {} : { params: row.params }),
    ...(row.answer === null ? {} : { answer: row.answer }),
    cursor: toCursor(row),
  }
}

export type RequestView = ReturnType<typeof toRequestView>

/**
 * GET .../requests: the rows of `accountId` (undefined: every account, for the operator) matching
 * the query string's filters, newest first, with `keys` naming them (a `key` filter is a key's name
 * or value among them). JSON `{requests, next}` (`next`: the `before` of the next page, null at the
 * end), or with `format=ndjson` one row a line (the next page's `before` in `x-next-before`).
 */
export async function readRequests(
  reader: RequestLogReader,
  search: URLSearchParams,
  accountId: number | undefined,
  keys: readonly ApiKey[],
): Promise<{ requests: RequestView[]; next: string | null } | TextAnswer> {
  const ndjson = readFormat(search.get('format')) === 'ndjson'
  const limit = parseWholeNumber('limit', search.get('limit'), ndjson ? exportRows : pageRows)
  const query: RequestLogQuery = { ...readFilters(search, keys), accountId, limit: limit + 1 }
  await reader.flush()
  const rows = await reader.store.read(query)
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  const next = rows.length > limit && last ? toCursor(last) : null
  const keysById = new Map(keys.map((key) => [key.id, key]))
  const requests = page.map((row) => toRequestView(row, keysById))
  if (!ndjson) return { requests, next }
  const text = requests.map((request) => `${JSON.stringify(request)}\n`).join('')
  return new TextAnswer('application/x-ndjson', text, next === null ? {} : { 'x-next-before': next })
}

/**
 * GET /account/api/requests/summary?days=N: the account's errors and refused calls over the last N
 * days by status, code, error and reason (exact: every one is logged, as long as the log keeps
 * it), and the latency of its successful calls from the sample.
 */
export async function summarizeRequests(
  reader: RequestLogReader,
  search: URLSearchParams,
  accountId: number,
) {
  const days = parseWholeNumber('days', search.get('days'), { min: 1, max: reader.days, fallback: 1 })
  const fromMs = Date.now() - days * 86_400_000
  await reader.flush()
  const { failures, latency } = await reader.store.summarize(accountId, fromMs, maxSummaryGroups)
  const total = (outcome: RequestOutcome) =>
    failures.filter((row) => row.outcome === outcome).reduce((sum, row) => sum + row.calls, 0)
  return {
    days,
    from: new Date(fromMs).toISOString(),
    errors: total('error'),
    refused: total('refused'),
    failures,
    latency: { basis: 'sampled successful calls', sampleRate: reader.sampleRate, ...latency },
  }
}

function readFilters(
  search: URLSearchParams,
  keys: readonly ApiKey[],
): Omit<RequestLogQuery, 'accountId' | 'limit'> {
  const key = search.get('key')
  const outcome = search.get('outcome')
  if (outcome !== null && !requestOutcomes.includes(outcome as RequestOutcome))
    throw new AdminRequestError(`outcome: expected one of ${requestOutcomes.join(', ')}`)
  return {
    keyIds:
      key === null
        ? undefined
        : keys.filter((each) => each.name === key || each.key === key).map((each) => each.id),
    network: readName(search, 'network'),
    method: readName(search, 'method'),
    outcome: (outcome ?? undefined) as RequestOutcome | undefined,
    fromMs: readTime(search, 'from'),
    toMs: readTime(search, 'to'),
    before: readCursor(search.get('before')),
  }
}

function readFormat(format: string | null): 'json' | 'ndjson' {
  if (format === null || format === 'json' || format === 'ndjson') return format ?? 'json'
  throw new AdminRequestError('format: expected json or ndjson')
}

function readName(search: URLSearchParams, name: string): string | undefined {
  const value = search.get(name)
  if (value === null) return undefined
  if (value.length > maxFilterChars)
    throw new AdminRequestError(`${name}: at most ${maxFilterChars} characters`)
  return value
}

/** An ISO 8601 time (`2025-01-31`, `2025-01-31T12:00:00Z`). */
function readTime(search: URLSearchParams, name: string): number | undefined {
  const value = search.get(name)
  if (value === null) return undefined
  const ms = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN
  if (Number.isNaN(ms)) throw new AdminRequestError(`${name}: expected an ISO 8601 time`)
  return ms
}

/** A row's place in the order (time, then id): what `before` takes to page on. */
function toCursor(row: StoredRequestLogRow): string {
  return `${row.timeMs}.${row.id}`
}

function readCursor(value: string | null): RequestLogCursor | undefined {
  if (value === null) return undefined
  const match = /^(\d{1,16})\.(\d{1,16})$/.exec(value)
  if (!match) throw new AdminRequestError('before: expected the `next` of an earlier page')
  return { timeMs: Number(match[1]), id: Number(match[2]) }
}
