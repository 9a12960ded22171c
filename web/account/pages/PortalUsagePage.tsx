import { useMemo, useState } from 'preact/hooks'
import { Chart } from '../../Chart.tsx'
import { periodStartMs } from '../../format.ts'
import { type Column, SortableTable } from '../../SortableTable.tsx'
import { usePolling } from '../../usePolling.ts'
import { accountApi } from '../accountApi.ts'

/** A row of GET /account/api/usage: one UTC day, key, network and method. */
type UsageRow = {
  day: string
  network: string
  method: string
  calls: number
  credits: number
  failoverCalls: number
  key: string
  keyName: string
}

const periods = [7, 30, 90] as const
const refreshMs = 10_000
const dayMs = 86_400_000

type Total = { group: string; calls: number; credits: number }
type Dimension = 'keyName' | 'network' | 'method'
const dimensions: { by: Dimension; label: string }[] = [
  { by: 'method', label: 'method' },
  { by: 'network', label: 'network' },
  { by: 'keyName', label: 'key' },
]

/** The account's calls and credits by day, then by method, network and key, over 7 to 90 days. */
export function PortalUsagePage() {
  const [days, setDays] = useState<number>(7)
  const [keyName, setKeyName] = useState('')
  const { data, error } = usePolling(
    async () => (await accountApi<{ usage: UsageRow[] }>(`usage?days=${days}`)).usage,
    refreshMs,
    [days],
  )
  const all = data ?? []
  const names = useMemo(() => [...new Set(all.map((row) => row.keyName))].sort(), [all])
  const rows = useMemo(() => all.filter((row) => keyName === '' || row.keyName === keyName), [all, keyName])
  const series = useMemo(() => perDay(rows, days), [rows, days])

  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      {error && <p class="error">{error}</p>}
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Period
          <select
            aria-label="Period"
            value={String(days)}
            onChange={(event) => setDays(Number(event.currentTarget.value))}
          >
            {periods.map((each) => (
              <option key={each} value={String(each)}>
                last {each} days
              </option>
            ))}
          </select>
        </label>
        <label>
          Key
          <select
            aria-label="Key"
            value={keyName}
            onChange={(event) => setKeyName(event.currentTarget.value)}
          >
            <option value="">every key</option>
            {names.map((name) => (
              <option key={name} value={name}>
                {name || '(no name)'}
              </option>
            ))}
          </select>
        </label>
      </form>
      {!data ? (
        <p role="status">{error ? '' : 'Loading…'}</p>
      ) : (
        <>
          <Chart
            label={`Calls and credits per day, the last ${days} days`}
            x={series.x}
            bars
            leftUnit="calls"
            rightUnit="credits"
            series={[
              { label: 'calls', values: series.calls, color: '#2563eb' },
              { label: 'credits', values: series.credits, color: '#d97706', right: true },
            ]}
          />
          <div class="cards">
            {dimensions.map(({ by, label }) => (
              <div class="card" key={by}>
                <SortableTable
                  caption={`By ${label}`}
                  rows={totals(rows, by)}
                  rowKey={(row) => row.group}
                  initialSort={{ key: 'credits', descending: true }}
                  empty="No calls."
                  columns={totalColumns(label)}
                />
              </div>
            ))}
          </div>
          <SortableTable
            caption="By day, key, network and method (UTC days)"
            rows={rows}
            rowKey={(row) => `${row.day}|${row.key}|${row.network}|${row.method}`}
            initialSort={{ key: 'day', descending: true }}
            empty="No calls in this period."
            columns={rowColumns}
          />
        </>
      )}
    </section>
  )
}

function totalColumns(label: string): Column<Total>[] {
  return [
    { key: 'group', label, value: (row) => row.group || '(no name)' },
    { key: 'calls', label: 'calls', value: (row) => row.calls, numeric: true },
    { key: 'credits', label: 'credits', value: (row) => row.credits, numeric: true },
  ]
}

const rowColumns: Column<UsageRow>[] = [
  { key: 'day', label: 'day', value: (row) => row.day },
  { key: 'keyName', label: 'key', value: (row) => row.keyName || '(no name)' },
  { key: 'network', label: 'network', value: (row) => row.network },
  { key: 'method', label: 'method', value: (row) => row.method },
  { key: 'calls', label: 'calls', value: (row) => row.calls, numeric: true },
  { key: 'credits', label: 'credits', value: (row) => row.credits, numeric: true },
  { key: 'failoverCalls', label: 'partner calls', value: (row) => row.failoverCalls, numeric: true },
]

function totals(rows: UsageRow[], by: Dimension): Total[] {
  const byGroup = new Map<string, Total>()
  for (const row of rows) {
    const total = byGroup.get(row[by]) ?? { group: row[by], calls: 0, credits: 0 }
    total.calls += row.calls
    total.credits += row.credits
    byGroup.set(row[by], total)
  }
  return [...byGroup.values()]
}

/** Calls and credits of each of the last `days` UTC days, days without calls at 0. */
function perDay(rows: UsageRow[], days: number) {
  const today = Math.floor(Date.now() / dayMs) * dayMs
  const starts = Array.from({ length: days }, (_, index) => today - (days - 1 - index) * dayMs)
  const calls = new Map<number, number>()
  const credits = new Map<number, number>()
  for (const row of rows) {
    const start = periodStartMs(row.day)
    calls.set(start, (calls.get(start) ?? 0) + row.calls)
    credits.set(start, (credits.get(start) ?? 0) + row.credits)
  }
  return {
    x: starts.map((start) => start / 1000),
    calls: starts.map((start) => calls.get(start) ?? 0),
    credits: starts.map((start) => credits.get(start) ?? 0),
  }
}
