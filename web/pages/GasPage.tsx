import { api } from '../api.ts'
import { Chart } from '../Chart.tsx'
import { usePolling } from '../usePolling.ts'

type Level = {
  suggestedMaxPriorityFeePerGas: string
  suggestedMaxFeePerGas: string
  minWaitTimeEstimate: number
  maxWaitTimeEstimate: number
}

type SuggestedGasFees = {
  low: Level
  medium: Level
  high: Level
  estimatedBaseFee: string
  networkCongestion: number
  latestPriorityFeeRange: string[]
  historicalPriorityFeeRange: string[]
  historicalBaseFeeRange: string[]
  priorityFeeTrend: string
  baseFeeTrend: string
}

type GasChain = {
  chainId: number
  network: string
  status: 'loading' | 'ready' | 'no-base-fee'
  window: {
    head: number
    blocks: number
    blocksPerPoint: number
    p50Gwei: string
    p90Gwei: string
    nextBaseFeeGwei: string
    history: { block: number; baseFeeGwei: number }[]
  } | null
  suggestedGasFees?: SuggestedGasFees
}

const refreshMs = 15_000
const statusText = {
  loading: 'The fee history is still loading.',
  'no-base-fee': 'This chain has no base fees (pre-London): the gas API needs EIP-1559 blocks.',
  ready: '',
}

export function GasPage() {
  const { data, error } = usePolling(() => api<GasChain[]>('gas'), refreshMs)
  if (!data) return <p role="status">{error ?? 'Loading…'}</p>
  return (
    <section aria-labelledby="gas-title">
      <h1 id="gas-title">Gas</h1>
      {error && <p class="error">{error}</p>}
      {data.length === 0 && <p>The gas API is off (gas.enabled: false): no fee history is kept.</p>}
      {data.map((chain) => (
        <article key={chain.chainId} class="network" aria-labelledby={`gas-${chain.chainId}`}>
          <h2 id={`gas-${chain.chainId}`}>
            {chain.network} <span class="muted">chain {chain.chainId}</span>
          </h2>
          {chain.window && chain.suggestedGasFees ? (
            <GasWindow window={chain.window} fees={chain.suggestedGasFees} network={chain.network} />
          ) : (
            <p role="status">{statusText[chain.status] || 'No blocks stored yet.'}</p>
          )}
        </article>
      ))}
    </section>
  )
}

function GasWindow(props: {
  window: NonNullable<GasChain['window']>
  fees: SuggestedGasFees
  network: string
}) {
  const { window, fees } = props
  const p50 = Number(window.p50Gwei)
  const p90 = Number(window.p90Gwei)
  const blocks = window.history.map((point) => point.block)
  return (
    <>
      <div class="table-scroll">
        <table class="stack">
          <caption>suggestedGasFees (Gwei), estimated base fee {fees.estimatedBaseFee}</caption>
          <thead>
            <tr>
              <th scope="col">level</th>
              <th scope="col" class="numeric">
                max priority fee
              </th>
              <th scope="col" class="numeric">
                max fee
              </th>
              <th scope="col" class="numeric">
                wait (s)
              </th>
            </tr>
          </thead>
          <tbody>
            {(['low', 'medium', 'high'] as const).map((level) => (
              <tr key={level}>
                <th scope="row">{level}</th>
                <td class="numeric" data-label="max priority fee">
                  {fees[level].suggestedMaxPriorityFeePerGas}
                </td>
                <td class="numeric" data-label="max fee">
                  {fees[level].suggestedMaxFeePerGas}
                </td>
                <td class="numeric" data-label="wait (s)">
                  {fees[level].minWaitTimeEstimate / 1000}–{fees[level].maxWaitTimeEstimate / 1000}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <dl class="figures">
        <dt>congestion</dt>
        <dd>{fees.networkCongestion}</dd>
        <dt>base fee trend</dt>
        <dd>{fees.baseFeeTrend}</dd>
        <dt>priority fee trend</dt>
        <dd>{fees.priorityFeeTrend}</dd>
        <dt>base fee p50 / p90</dt>
        <dd>
          {window.p50Gwei} / {window.p90Gwei}
        </dd>
      </dl>
      <Chart
        label={`${props.network}: base fee in Gwei over the stored window of ${window.blocks} blocks up to block ${window.head}; 50th percentile ${window.p50Gwei}, 90th percentile ${window.p90Gwei}`}
        x={blocks}
        blockAxis
        leftUnit="Gwei"
        series={[
          {
            label:
              window.blocksPerPoint > 1 ? `base fee (mean of ${window.blocksPerPoint} blocks)` : 'base fee',
            values: window.history.map((point) => point.baseFeeGwei),
            color: '#2563eb',
          },
          { label: 'p50', values: blocks.map(() => p50), color: '#16a34a', dash: [6, 4] },
          { label: 'p90', values: blocks.map(() => p90), color: '#dc2626', dash: [6, 4] },
        ]}
      />
    </>
  )
}
