import { api } from '../api.ts'
import { Chart } from '../Chart.tsx'
import { formatDecimal, formatInteger, formatPercent } from '../format.ts'
import { SortableTable } from '../SortableTable.tsx'
import { usePolling } from '../usePolling.ts'

type Upstream = {
  name: string
  role: 'primary' | 'partner'
  head: number | null
  lagBlocks: number | null
  latencyMs: number | null
  errorRate: number
  breaker: 'open' | 'closed'
  requests: number
  failures: number
}

type NetworkOverview = {
  name: string
  chainId: number
  head: number | null
  finalized: number | null
  callsPerSecond: number[]
  creditsPerMinute: number[]
  statuses: Record<string, number>
  cache: { hits: number; misses: number; hitRatio: number | null; entries: number } | null
  upstreams: Upstream[]
}

export type Overview = {
  /** The instance that answered: heads and upstreams are its own. */
  instance: string
  /** Calls, credits, answers and cache hits are every instance's (through Redis). */
  shared: boolean
  /** Shared, but Redis did not answer: no per-minute figures this time. */
  unavailable: boolean
  minutes: number[]
  statuses: Record<string, number>
  networks: NetworkOverview[]
}

const refreshMs = 5_000

export function OverviewPage() {
  const { data, error } = usePolling(() => api<Overview>('overview'), refreshMs)
  if (!data) return <p role="status">{error ?? 'Loading…'}</p>
  const x = data.minutes.map((ms) => ms / 1000)
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      {error && <p class="error">{error}</p>}
      {data.unavailable && (
        <p class="error" role="alert">
          Redis did not answer: the calls, credits, answers and cache hits of the last hour cannot be shown
          now (they are kept and sent when it is back).
        </p>
      )}
      <p class="hint" data-testid="overview-scope">
        {data.shared
          ? `The last hour, per minute, of every instance (shared through Redis); heads and upstreams as seen by ${data.instance}, which answered. Refreshed every ${refreshMs / 1000} s.`
          : `The last hour, per minute, of this instance (${data.instance}); refreshed every ${refreshMs / 1000} s.`}
      </p>
      <div class="cards">
        <div class="card">
          <h2>JSON-RPC answers (last hour)</h2>
          <Answers
            statuses={data.statuses}
            caption="Answers by HTTP status, every network"
            testId="answers-total"
          />
        </div>
      </div>
      {data.networks.map((network) => (
        <article key={network.name} class="network" aria-labelledby={`network-${network.name}`}>
          <h2 id={`network-${network.name}`}>
            {network.name} <span class="muted">chain {network.chainId}</span>
          </h2>
          <dl class="figures">
            <dt>head</dt>
            <dd>{network.head ?? '–'}</dd>
            <dt>finalized</dt>
            <dd>{network.finalized ?? '–'}</dd>
            <dt>calls/s now</dt>
            <dd>{formatDecimal(network.callsPerSecond[network.callsPerSecond.length - 1] ?? 0)}</dd>
            <dt>cache hit ratio</dt>
            <dd>{network.cache ? formatPercent(network.cache.hitRatio) : 'cache off'}</dd>
          </dl>
          <Chart
            label={`${network.name}: calls per second and credits per minute over the last hour`}
            x={x}
            leftUnit="calls/s"
            rightUnit="credits/min"
            series={[
              { label: 'calls/s', values: network.callsPerSecond, color: '#2563eb' },
              { label: 'credits/min', values: network.creditsPerMinute, color: '#d97706', right: true },
            ]}
          />
          <Answers statuses={network.statuses} caption={`${network.name}: answers by HTTP status`} />
          <SortableTable
            caption={`${network.name} upstreams`}
            rowKey={(row) => `${row.role}:${row.name}`}
            rows={network.upstreams}
            columns={[
              { key: 'name', label: 'upstream', value: (row) => row.name },
              { key: 'role', label: 'role', value: (row) => row.role },
              {
                key: 'breaker',
                label: 'breaker',
                value: (row) => row.breaker,
                render: (row) => (
                  <span class={row.breaker === 'open' ? 'bad' : 'good'}>
                    {row.breaker === 'open' ? 'open (kept off)' : 'closed (in use)'}
                  </span>
                ),
              },
              {
                key: 'head',
                label: 'head',
                value: (row) => row.head ?? -1,
                render: (row) => row.head ?? '–',
                numeric: true,
              },
              {
                key: 'lag',
                label: 'lag (blocks)',
                value: (row) => row.lagBlocks ?? -1,
                render: (row) => row.lagBlocks ?? '–',
                numeric: true,
              },
              {
                key: 'latency',
                label: 'latency (ms)',
                value: (row) => row.latencyMs ?? -1,
                render: (row) => row.latencyMs ?? '–',
                numeric: true,
              },
              {
                key: 'errorRate',
                label: 'error rate',
                value: (row) => row.errorRate,
                render: (row) => formatPercent(row.errorRate),
                numeric: true,
              },
              { key: 'requests', label: 'calls', value: (row) => row.requests, numeric: true },
              { key: 'failures', label: 'failures', value: (row) => row.failures, numeric: true },
            ]}
          />
        </article>
      ))}
    </section>
  )
}

/** JSON-RPC answers of the last hour by status: the refused (4xx) and failed (5xx) shares, and each status. */
function Answers(props: { statuses: Record<string, number>; caption: string; testId?: string }) {
  const answers = Object.entries(props.statuses)
  const total = answers.reduce((sum, [, count]) => sum + count, 0)
  const share = (test: (status: number) => boolean) =>
    total === 0
      ? null
      : answers.filter(([status]) => test(Number(status))).reduce((sum, [, count]) => sum + count, 0) / total
  return (
    <>
      <dl class="figures">
        <dt>answers</dt>
        <dd data-testid={props.testId}>{formatInteger(total)}</dd>
        <dt>refused (4xx)</dt>
        <dd>{formatPercent(share((status) => status >= 400 && status < 500))}</dd>
        <dt>errors (5xx)</dt>
        <dd>{formatPercent(share((status) => status >= 500))}</dd>
      </dl>
      {total > 0 && (
        <table class="compact">
          <caption>{props.caption}</caption>
          <thead>
            <tr>
              <th scope="col">status</th>
              <th scope="col" class="numeric">
                answers
              </th>
              <th scope="col" class="numeric">
                share
              </th>
            </tr>
          </thead>
          <tbody>
            {answers.map(([status, count]) => (
              <tr key={status}>
                <td>{status}</td>
                <td class="numeric">{formatInteger(count)}</td>
                <td class="numeric">{formatPercent(count / total)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  )
}
