import { formatInteger } from '../../format.ts'
import { usePolling } from '../../usePolling.ts'
import { accountApi } from '../accountApi.ts'

/** GET /account/api/account: the plan's numbers (null: no limit) and today's credits. */
type AccountFigures = {
  account: string
  plan: string
  dailyCredits: number | null
  creditsPerSecond: number | null
  creditsUsedToday: number
  resetsAt: string
}

const refreshMs = 10_000

/** The account at a glance: credits left today and when they come back, the plan and its rate. */
export function PortalOverviewPage() {
  const { data, error } = usePolling(() => accountApi<AccountFigures>('account'), refreshMs)
  if (!data) return <p role="status">{error ?? 'Loading…'}</p>
  const left = data.dailyCredits === null ? null : Math.max(0, data.dailyCredits - data.creditsUsedToday)
  const resetsAt = new Date(data.resetsAt)
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">{data.account}</h1>
      {error && <p class="error">{error}</p>}
      <div class="cards">
        <div class="card">
          <h2>Credits left today</h2>
          <p class="big" data-testid="credits-left">
            {left === null ? 'no daily limit' : formatInteger(left)}
          </p>
          <p class="muted">
            {formatInteger(data.creditsUsedToday)} used
            {data.dailyCredits === null ? '' : ` of ${formatInteger(data.dailyCredits)}`}
          </p>
          {data.dailyCredits !== null && (
            <meter
              min={0}
              max={data.dailyCredits}
              value={data.creditsUsedToday}
              aria-label="Share of today's credits used"
            />
          )}
        </div>
        <div class="card">
          <h2>Resets</h2>
          <p class="big" data-testid="resets-at">
            {resetsAt.toISOString().slice(11, 16)} UTC
          </p>
          <p class="muted">
            in {untilText(resetsAt.getTime() - Date.now())} ({resetsAt.toLocaleString()})
          </p>
        </div>
        <div class="card">
          <h2>Plan</h2>
          <p class="big" data-testid="plan">
            {data.plan}
          </p>
          <p class="muted">
            {data.creditsPerSecond === null
              ? 'no limit per second'
              : `${formatInteger(data.creditsPerSecond)} credits per second`}
          </p>
        </div>
      </div>
      <p class="hint">Credits are counted per UTC day; every call's cost is in the Usage page.</p>
    </section>
  )
}

function untilText(ms: number): string {
  const minutes = Math.max(0, Math.round(ms / 60_000))
  const hours = Math.floor(minutes / 60)
  return hours > 0 ? `${hours} h ${minutes % 60} min` : `${minutes} min`
}
