import { useEffect, useState } from 'preact/hooks'
import { messageOf } from '../../api.ts'
import { formatInteger } from '../../format.ts'
import { type Page, RequestLogView } from '../../pages/RequestsPage.tsx'
import { accountApi } from '../accountApi.ts'

/** GET /account/api/requests/summary: src/requestLog/readRequestLog.ts. */
type Summary = {
  days: number
  errors: number
  refused: number
  failures: {
    outcome: string
    status: number
    code: number | null
    error: string | null
    reason: string | null
    calls: number
  }[]
  latency: { sampleRate: number; sampledCalls: number; p50Ms: number | null; p99Ms: number | null }
}

const summaryDays = [1, 7] as const

/**
 * The account's request log: its errors and refused calls by reason and its latency (from the
 * sample) over the last day or week, then the log itself, the dashboard's view of one account.
 */
export function PortalRequestsPage() {
  const [days, setDays] = useState<(typeof summaryDays)[number]>(1)
  const [summary, setSummary] = useState<Summary | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  useEffect(() => {
    accountApi<Summary>(`requests/summary?days=${days}`).then(setSummary, (err: unknown) =>
      setError(messageOf(err)),
    )
  }, [days])
  const ms = (value: number | null | undefined) => (value == null ? '–' : `${formatInteger(value)} ms`)
  return (
    <>
      <section aria-labelledby="summary-title">
        <h1 id="summary-title">Errors and latency</h1>
        <div class="filters">
          <label>
            Period
            <select
              aria-label="Period"
              value={days}
              onChange={(event) => setDays(Number(event.currentTarget.value) === 7 ? 7 : 1)}
            >
              <option value="1">last 24 hours</option>
              <option value="7">last 7 days</option>
            </select>
          </label>
        </div>
        {error && <p class="error">{error}</p>}
        <p data-testid="requests-summary">
          {formatInteger(summary?.errors ?? 0)} errors, {formatInteger(summary?.refused ?? 0)} refused calls;
          latency p50 {ms(summary?.latency.p50Ms)}, p99 {ms(summary?.latency.p99Ms)} (from{' '}
          {formatInteger(summary?.latency.sampledCalls ?? 0)} sampled successful calls)
        </p>
        <table class="stack">
          <caption>Errors and refused calls by reason</caption>
          <thead>
            <tr>
              <th scope="col">outcome</th>
              <th scope="col">status</th>
              <th scope="col">code</th>
              <th scope="col">reason</th>
              <th scope="col">calls</th>
            </tr>
          </thead>
          <tbody>
            {(summary?.failures ?? []).map((row) => (
              <tr key={`${row.outcome}|${row.status}|${row.code}|${row.error}|${row.reason}`}>
                <td data-label="outcome">{row.outcome}</td>
                <td data-label="status">{row.status}</td>
                <td data-label="code">{row.code ?? ''}</td>
                <td data-label="reason">{row.error ? `${row.error}: ${row.reason ?? ''}` : ''}</td>
                <td data-label="calls">{formatInteger(row.calls)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <RequestLogView
        title="Request log"
        read={(query) => accountApi<Page>(`requests?${query}`)}
        exportHref={(query) => `/account/api/requests?format=ndjson${query ? `&${query}` : ''}`}
      />
    </>
  )
}
