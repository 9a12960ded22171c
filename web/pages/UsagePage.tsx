import { useMemo, useState } from 'preact/hooks'
import { api } from '../api.ts'
import { Chart } from '../Chart.tsx'
import { formatInteger, periodStartMs } from '../format.ts'
import { type Column, SortableTable } from '../SortableTable.tsx'
import { usePolling } from '../usePolling.ts'

/** A row of GET /admin/usage: `hour` with `?hours=`, `day` with `?days=`. */
type UsageRow = {
  hour?: string
  day?: string
  key: string
  network: string
  method: string
  calls: number
  credits: number
  failoverCalls: number
}

type Row = Omit<UsageRow, 'hour' | 'day'> & { period: string }

const ranges = {
  hourly: { label: 'hourly, last 48 hours', query: 'hours=48', count: 48, stepMs: 3_600_000 },
  daily: { label: 'daily, last 30 days', query: 'days=30', count: 30, stepMs: 86_400_000 },
} as const
type Range = keyof typeof ranges

const refreshMs = 10_000

export function UsagePage() {
  const [range, setRange] = useState<Range>('hourly')
  const [key, setKey] = useState('')
  const [network, setNetwork] = useState('')
  const [totals, setTotals] = useState(false)
  const [by, setBy] = useState<Dimension>('method')
  const { data, error } = usePolling(
    async () =>
      (await api<UsageRow[]>(`admin/usage?${ranges[range].query}`)).map(
        ({ hour, day, ...row }): Row => ({ ...row, period: hour ?? day ?? '' }),
      ),
    refreshMs,
    [range],
  )
  const all = data ?? []
  const keys = useMemo(() => [...new Set(all.map((row) => row.key))].sort(), [all])
  const networks = useMemo(() => [...new Set(all.map((row) => row.network))].sort(), [all])
  const filtered = useMemo(
    () => all.filter((row) => (key === '' || row.key === key) && (network === '' || row.network === network)),
    [all, key, network],
  )
  const shown = useMemo(() => (totals ? toTotals(filtered) : filtered), [filtered, totals])
  const chart = useMemo(() => toSeries(filtered, range), [filtered, range])
  const breakdown = useMemo(() => toBreakdown(filtered, range, by), [filtered, range, by])
  const sum = filtered.reduce(
    (total, row) => ({ calls: total.calls + row.calls, credits: total.credits + row.credits }),
    {
      calls: 0,
      credits: 0,
    },
  )

  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Period
          <select
            aria-label="Period"
            value={range}
            onChange={(event) => setRange(event.currentTarget.value as Range)}
          >
            {Object.entries(ranges).map(([value, { label }]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Key
          <select aria-label="Key" value={key} onChange={(event) => setKey(event.currentTarget.value)}>
            <option value="">every key</option>
            {keys.map((each) => (
              <option key={each} value={each}>
                {each}
              </option>
            ))}
          </select>
        </label>
        <label>
          Network
          <select
            aria-label="Network"
            value={network}
            onChange={(event) => setNetwork(event.currentTarget.value)}
          >
            <option value="">every network</option>
            {networks.map((each) => (
              <option key={each} value={each}>
                {each}
              </option>
            ))}
          </select>
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={totals}
            onChange={(event) => setTotals(event.currentTarget.checked)}
          />
          Totals per key, network and method
        </label>
        <button type="button" onClick={() => downloadCsv(shown, range, totals)}>
          Export CSV
        </button>
      </form>
      {error && <p class="error">{error}</p>}
      <p data-testid="usage-sum">
        {formatInteger(sum.calls)} calls, {formatInteger(sum.credits)} credits
      </p>
      <Chart
        label={`Calls and credits ${ranges[range].label}${key ? ` for key ${key}` : ''}${network ? ` on ${network}` : ''}: ${sum.calls} calls, ${sum.credits} credits`}
        x={chart.x}
        leftUnit="calls"
        rightUnit="credits"
        bars
        series={[
          { label: 'calls', values: chart.calls, color: '#2563eb' },
          { label: 'credits', values: chart.credits, color: '#d97706', right: true, dash: [4, 2] },
        ]}
      />
      <div class="filters">
        <label>
          Credits by
          <select
            aria-label="Credits by"
            value={by}
            onChange={(event) => setBy(event.currentTarget.value as Dimension)}
          >
            <option value="method">method</option>
            <option value="key">key</option>
            <option value="network">network</option>
          </select>
        </label>
      </div>
      <Chart
        label={`Credits ${ranges[range].label} by ${by}: ${breakdown.series.map((series) => `${series.label} ${series.total}`).join(', ') || 'none'}`}
        x={breakdown.x}
        leftUnit="credits"
        series={breakdown.series}
      />
      <SortableTable
        caption={totals ? 'Usage totals' : `Usage ${ranges[range].label}`}
        rows={shown}
        rowKey={(row) => `${row.period}|${row.key}|${row.network}|${row.method}`}
        initialSort={{ key: 'period', descending: true }}
        empty="No usage in this period."
        columns={columns(totals)}
      />
    </section>
  )
}

function columns(totals: boolean): Column<Row>[] {
  return [
    ...(totals ? [] : [{ key: 'period', label: 'period (UTC)', value: (row: Row) => row.period }]),
    { key: 'key', label: 'key', value: (row) => row.key, render: (row) => <code>{row.key}</code> },
    { key: 'network', label: 'network', value: (row) => row.network },
    { key: 'method', label: 'method', value: (row) => row.method },
    { key: 'calls', label: 'calls', value: (row) => row.calls, numeric: true },
    { key: 'credits', label: 'credits', value: (row) => row.credits, numeric: true },
    { key: 'failoverCalls', label: 'partner calls', value: (row) => row.failoverCalls, numeric: true },
  ]
}

function toTotals(rows: Row[]): Row[] {
  const byGroup = new Map<string, Row>()
  for (const row of rows) {
    const group = `${row.key}|${row.network}|${row.method}`
    const total = byGroup.get(group)
    if (total) {
      total.calls += row.calls
      total.credits += row.credits
      total.failoverCalls += row.failoverCalls
    } else byGroup.set(group, { ...row, period: '' })
  }
  return [...byGroup.values()]
}

/** Calls and credits per period over the whole range, periods without usage at 0. */
function toSeries(rows: Row[], range: Range) {
  const { count, stepMs } = ranges[range]
  const last = Math.floor(Date.now() / stepMs) * stepMs
  const starts = Array.from({ length: count }, (_, index) => last - (count - 1 - index) * stepMs)
  const calls = new Map<number, number>()
  const credits = new Map<number, number>()
  for (const row of rows) {
    const start = periodStartMs(row.period)
    calls.set(start, (calls.get(start) ?? 0) + row.calls)
    credits.set(start, (credits.get(start) ?? 0) + row.credits)
  }
  return {
    x: starts.map((start) => start / 1000),
    calls: starts.map((start) => calls.get(start) ?? 0),
    credits: starts.map((start) => credits.get(start) ?? 0),
  }
}

type Dimension = 'method' | 'key' | 'network'
const palette = ['#2563eb', '#d97706', '#16a34a', '#dc2626', '#7c3aed', '#0891b2', '#6b7280']
/** Lines drawn at most: the groups with the most credits, the rest summed as `other`. */
const maxLines = 6

/** Credits per period of each method, key or network (the largest few; the rest as `other`). */
function toBreakdown(rows: Row[], range: Range, by: Dimension) {
  const { x } = toSeries([], range)
  const totals = new Map<string, number>()
  for (const row of rows) totals.set(row[by], (totals.get(row[by]) ?? 0) + row.credits)
  const ranked = [...totals].sort((a, b) => b[1] - a[1])
  const shown = new Set(
    ranked.slice(0, ranked.length > maxLines + 1 ? maxLines : maxLines + 1).map(([name]) => name),
  )
  const groups = [...shown, ...(ranked.length > shown.size ? ['other'] : [])]
  const series = groups.map((group, index) => {
    const members = rows.filter((row) => (group === 'other' ? !shown.has(row[by]) : row[by] === group))
    const perPeriod = toSeries(members, range).credits
    return {
      label: by === 'key' && group !== 'other' ? `${group.slice(0, 8)}…` : group,
      values: perPeriod,
      color: palette[index % palette.length] as string,
      total: perPeriod.reduce((sum, value) => sum + value, 0),
    }
  })
  return { x, series }
}

function downloadCsv(rows: Row[], range: Range, totals: boolean) {
  const header = ['period', 'key', 'network', 'method', 'calls', 'credits', 'failoverCalls']
  const lines = rows.map((row) =>
    [row.period, row.key, row.network, row.method, row.calls, row.credits, row.failoverCalls]
      .map(csvCell)
      .join(','),
  )
  const blob = new Blob([`${[header.join(','), ...lines].join('\n')}\n`], { type: 'text/csv' })
  const link = document.createElement('a')
  link.href = URL.createObjectURL(blob)
  link.download = `tollgate-usage-${totals ? 'totals' : range}.csv`
  link.click()
  setTimeout(() => URL.revokeObjectURL(link.href), 0)
}

function csvCell(value: string | number): string {
  const text = String(value)
  return /[",\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}
