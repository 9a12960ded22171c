import { useEffect, useState } from 'preact/hooks'
import { api, messageOf } from '../api.ts'
import { formatInteger } from '../format.ts'
import { type Column, SortableTable } from '../SortableTable.tsx'

/** A row of GET /admin/requests (and /account/api/requests): src/requestLog/readRequestLog.ts. */
type RequestRow = {
  time: string
  account: string | null
  keyName: string | null
  key: string | null
  network: string
  method: string
  outcome: 'ok' | 'error' | 'refused'
  status: number
  code: number | null
  error: string | null
  reason: string | null
  credits: number
  durationMs: number
  cacheHit: boolean
  upstream: string | null
  clientAddress: string | null
  userAgent: string | null
  cursor: string
}

export type Page = { requests: RequestRow[]; next: string | null }

type Filters = {
  account: string
  key: string
  network: string
  method: string
  outcome: string
  from: string
  to: string
}

const noFilters: Filters = { account: '', key: '', network: '', method: '', outcome: '', from: '', to: '' }

/** The query string of the filters set (a `datetime-local` value read as UTC). */
function toQuery(filters: Filters): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(filters)) {
    if (value === '') continue
    query.set(name, name === 'from' || name === 'to' ? `${value}:00Z` : value)
  }
  return query.toString()
}

/** The dashboard's page: every account's log, through the admin API. */
export function RequestsPage() {
  return (
    <RequestLogView
      title="Requests"
      read={(query) => api<Page>(`admin/requests?${query}`)}
      exportHref={(query) => `/dashboard/api/admin/requests?format=ndjson${query ? `&${query}` : ''}`}
      byAccount
    />
  )
}

export type RequestLogViewProps = {
  title: string
  /** One page of rows for a query string (`limit`, filters, `before`). */
  read: (query: string) => Promise<Page>
  /** Where the NDJSON export of the rows the filters match is. */
  exportHref: (query: string) => string
  /** The operator's view: an account filter and column. */
  byAccount?: boolean
}

/**
 * A request log (the dashboard's, every account's; the portal's, one account's): sampled calls and
 * every error and refusal, newest first, filtered by key, network, method, outcome and time (and
 * account); older rows page by page; the rows the filters match exported as NDJSON.
 */
export function RequestLogView(props: RequestLogViewProps) {
  const [draft, setDraft] = useState<Filters>(noFilters)
  const [filters, setFilters] = useState<Filters>(noFilters)
  const [rows, setRows] = useState<RequestRow[]>([])
  const [next, setNext] = useState<string | null>(null)
  const [error, setError] = useState<string | undefined>(undefined)
  const [loading, setLoading] = useState(false)
  const query = toQuery(filters)

  const load = async (before: string | null) => {
    setLoading(true)
    setError(undefined)
    try {
      const page = await props.read(
        `limit=100${query ? `&${query}` : ''}${before ? `&before=${before}` : ''}`,
      )
      setRows((shown) => (before ? [...shown, ...page.requests] : page.requests))
      setNext(page.next)
    } catch (err) {
      setError(messageOf(err))
    } finally {
      setLoading(false)
    }
  }
  // loads again when the filters applied change
  useEffect(() => {
    void load(null)
  }, [query])

  const onInput = (name: keyof Filters) => (event: { currentTarget: HTMLInputElement }) =>
    setDraft({ ...draft, [name]: event.currentTarget.value })
  const field = (name: keyof Filters, label: string) => (
    <label>
      {label}
      <input aria-label={label} type="text" value={draft[name]} onInput={onInput(name)} />
    </label>
  )
  const time = (name: 'from' | 'to', label: string) => (
    <label>
      {label}
      <input aria-label={label} type="datetime-local" value={draft[name]} onInput={onInput(name)} />
    </label>
  )
  return (
    <section aria-labelledby="requests-title">
      <h1 id="requests-title">{props.title}</h1>
      <p>A sample of the calls, and every error and refused call.</p>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault()
          setFilters(draft)
        }}
      >
        {props.byAccount && field('account', 'Account')}
        {field('key', 'Key (name or key)')}
        {field('network', 'Network')}
        {field('method', 'Method')}
        <label>
          Outcome
          <select
            aria-label="Outcome"
            value={draft.outcome}
            onChange={(event) => setDraft({ ...draft, outcome: event.currentTarget.value })}
          >
            <option value="">every outcome</option>
            <option value="ok">ok</option>
            <option value="error">error</option>
            <option value="refused">refused</option>
          </select>
        </label>
        {time('from', 'From (UTC)')}
        {time('to', 'To (UTC)')}
        <button type="submit">Apply</button>
        <a class="button" href={props.exportHref(query)} download="tollgate-requests.ndjson">
          Export NDJSON
        </a>
      </form>
      {error && <p class="error">{error}</p>}
      <p data-testid="requests-count">{formatInteger(rows.length)} rows shown</p>
      <SortableTable
        caption="Requests, newest first"
        rows={rows}
        rowKey={(row) => row.cursor}
        initialSort={{ key: 'time', descending: true }}
        empty={loading ? 'Loading…' : 'No requests logged for these filters.'}
        columns={props.byAccount ? columns : columns.filter((column) => column.key !== 'account')}
      />
      {next !== null && (
        <button type="button" disabled={loading} onClick={() => void load(next)}>
          Older requests
        </button>
      )}
    </section>
  )
}

const columns: Column<RequestRow>[] = [
  { key: 'time', label: 'time (UTC)', value: (row) => row.time },
  { key: 'account', label: 'account', value: (row) => row.account ?? '' },
  {
    key: 'key',
    label: 'key',
    value: (row) => row.keyName ?? row.key ?? '',
    render: (row) => (
      <span title={row.key ?? undefined}>{row.keyName || <code>{row.key?.slice(0, 8)}…</code>}</span>
    ),
  },
  { key: 'network', label: 'network', value: (row) => row.network },
  { key: 'method', label: 'method', value: (row) => row.method },
  { key: 'outcome', label: 'outcome', value: (row) => row.outcome },
  { key: 'status', label: 'status', value: (row) => row.status, numeric: true },
  { key: 'code', label: 'code', value: (row) => row.code ?? '' },
  {
    key: 'reason',
    label: 'reason',
    value: (row) => row.reason ?? '',
    render: (row) => (row.error ? `${row.error}: ${row.reason ?? ''}` : ''),
  },
  { key: 'credits', label: 'credits', value: (row) => row.credits, numeric: true },
  { key: 'durationMs', label: 'ms', value: (row) => row.durationMs, numeric: true },
  { key: 'cacheHit', label: 'cache', value: (row) => (row.cacheHit ? 'hit' : '') },
  { key: 'upstream', label: 'upstream', value: (row) => row.upstream ?? '' },
  { key: 'clientAddress', label: 'client', value: (row) => row.clientAddress ?? '' },
  { key: 'userAgent', label: 'user agent', value: (row) => row.userAgent ?? '' },
]
