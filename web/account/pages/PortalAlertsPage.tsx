import { useState } from 'preact/hooks'
import { messageOf } from '../../api.ts'
import { OnceSecret } from '../../OnceSecret.tsx'
import { SortableTable } from '../../SortableTable.tsx'
import { usePolling } from '../../usePolling.ts'
import { accountApi } from '../accountApi.ts'

/** GET /account/api/alerts */
type AlertSettings =
  | { account: string; enabled: false }
  | {
      account: string
      enabled: true
      webhook: string
      thresholds: number[]
      format: 'json' | 'slack'
      updatedAt: string
    }

/** A row of GET /account/api/alerts/deliveries */
type Delivery = {
  id: string
  event: string
  key: string | null
  threshold: number | null
  day: string
  createdAt: string
  status: string
  attempts: number
  lastStatus: string | null
  deliveredAt: string | null
  nextAttemptAt: string | null
}

const refreshMs = 10_000

/**
 * Usage alerts: the webhook, thresholds and format (the signing secret shown once when made), and
 * the delivery log.
 */
export function PortalAlertsPage() {
  const settings = usePolling(() => accountApi<AlertSettings>('alerts'), refreshMs)
  const log = usePolling(() => accountApi<{ deliveries: Delivery[] }>('alerts/deliveries'), refreshMs)
  const [secret, setSecret] = useState<string | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [saved, setSaved] = useState<AlertSettings | undefined>(undefined)
  const current = saved ?? settings.data
  if (!current) return <p role="status">{settings.error ?? 'Loading…'}</p>

  const save = async (event: Event, rotateSecret = false) => {
    event.preventDefault()
    const form = (event.target as HTMLElement).closest('form') as HTMLFormElement
    const data = new FormData(form)
    const thresholds = String(data.get('thresholds') ?? '')
      .split(',')
      .map((part) => Number(part.trim()))
    try {
      const answer = await accountApi<AlertSettings & { secret: string | null }>('alerts', {
        method: 'PUT',
        body: { webhook: data.get('webhook'), thresholds, format: data.get('format'), rotateSecret },
      })
      setError(undefined)
      setSaved(answer)
      if (answer.secret) setSecret(answer.secret)
    } catch (err) {
      setError(messageOf(err))
    }
  }
  const turnOff = async () => {
    try {
      setSaved(await accountApi<AlertSettings>('alerts', { method: 'DELETE' }))
      setError(undefined)
    } catch (err) {
      setError(messageOf(err))
    }
  }

  return (
    <section aria-labelledby="alerts-title">
      <h1 id="alerts-title">Alerts</h1>
      <p class="hint">
        A webhook is posted to when your daily credits reach each threshold, and when a key is first refused
        for its rate in a day; every delivery is signed with the signing secret.
      </p>
      {secret && (
        <OnceSecret
          title="Signing secret"
          secret={secret}
          kept="tollgate keeps it sealed, to sign deliveries."
          onDone={() => setSecret(undefined)}
        />
      )}
      <form aria-label="Alert settings" onSubmit={(event) => save(event)}>
        <label>
          Webhook URL
          <input name="webhook" type="url" required value={current.enabled ? current.webhook : ''} />
        </label>
        <label>
          Thresholds (% of daily credits)
          <input
            name="thresholds"
            value={(current.enabled ? current.thresholds : [50, 75, 90, 100]).join(', ')}
          />
        </label>
        <label>
          Format
          <select name="format" value={current.enabled ? current.format : 'json'}>
            <option value="json">JSON</option>
            <option value="slack">Slack</option>
          </select>
        </label>
        <button type="submit">{current.enabled ? 'Save' : 'Turn alerts on'}</button>
        {current.enabled && (
          <>
            <button type="button" onClick={(event) => save(event, true)}>
              New signing secret
            </button>
            <button type="button" onClick={turnOff}>
              Turn alerts off
            </button>
          </>
        )}
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <p data-testid="alerts-state">{current.enabled ? 'Alerts are on.' : 'Alerts are off.'}</p>
      <SortableTable<Delivery>
        caption="Deliveries"
        rows={log.data?.deliveries ?? []}
        rowKey={(row) => row.id}
        initialSort={{ key: 'createdAt', descending: true }}
        empty="No alert events yet."
        columns={[
          { key: 'createdAt', label: 'Time', value: (row) => row.createdAt },
          { key: 'event', label: 'Event', value: (row) => row.event },
          { key: 'key', label: 'Key', value: (row) => row.key ?? 'account' },
          {
            key: 'threshold',
            label: 'Threshold',
            value: (row) => (row.threshold === null ? '-' : `${row.threshold}%`),
          },
          { key: 'status', label: 'Status', value: (row) => row.status },
          { key: 'attempts', label: 'Attempts', value: (row) => row.attempts, numeric: true },
          { key: 'lastStatus', label: 'Last answer', value: (row) => row.lastStatus ?? '-' },
          { key: 'deliveredAt', label: 'Delivered', value: (row) => row.deliveredAt ?? '-' },
          { key: 'nextAttemptAt', label: 'Next try', value: (row) => row.nextAttemptAt ?? '-' },
        ]}
      />
    </section>
  )
}
