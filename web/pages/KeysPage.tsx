import { useMemo, useState } from 'preact/hooks'
import { api, messageOf } from '../api.ts'
import { formatInteger } from '../format.ts'
import type { KeyView, Plan } from '../keyTypes.ts'
import { OnceSecret } from '../OnceSecret.tsx'
import { SortableTable } from '../SortableTable.tsx'
import { usePolling } from '../usePolling.ts'
import { KeyEditor } from './KeyEditor.tsx'

type KeysData = {
  keys: KeyView[]
  plans: Record<string, Plan>
  networks: string[]
  /** Credits spent today and the last hour (or day) with usage, per key. */
  usedToday: Map<string, number>
  lastUsed: Map<string, string>
}

async function loadKeys(): Promise<KeysData> {
  type Row = { key: string; credits: number; hour?: string; day?: string }
  const [keys, plans, overview, hourly, daily] = await Promise.all([
    api<KeyView[]>('admin/keys'),
    api<Record<string, Plan>>('admin/plans'),
    api<{ networks: { name: string }[] }>('overview'),
    api<Row[]>('admin/usage?hours=48'),
    api<Row[]>('admin/usage?days=30'),
  ])
  const today = new Date().toISOString().slice(0, 10)
  const usedToday = new Map<string, number>()
  const lastUsed = new Map<string, string>()
  for (const row of daily) {
    if (row.day === today) usedToday.set(row.key, (usedToday.get(row.key) ?? 0) + row.credits)
    lastUsed.set(row.key, row.day ?? '')
  }
  // finer where it is known: the last hour with usage in the last 48 hours
  for (const row of hourly) lastUsed.set(row.key, `${(row.hour ?? '').replace('T', ' ')}:00`)
  return { keys, plans, networks: overview.networks.map((network) => network.name), usedToday, lastUsed }
}

export function KeysPage() {
  const { data, error, reload } = usePolling(loadKeys, 0)
  const [selected, setSelected] = useState<string | undefined>(undefined)
  const [showRevoked, setShowRevoked] = useState(false)
  const keys = useMemo(
    () => (data?.keys ?? []).filter((key) => showRevoked || key.status === 'active'),
    [data, showRevoked],
  )
  if (!data) return <p role="status">{error ?? 'Loading…'}</p>
  const editing = data.keys.find((key) => key.key === selected && key.status === 'active')
  const limit = (key: KeyView) =>
    key.dailyCredits ?? data.plans[key.plan]?.dailyCredits ?? key.accountDailyCredits ?? null

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">Keys</h1>
      {error && <p class="error">{error}</p>}
      <CreateKey plans={Object.keys(data.plans)} onCreated={reload} />
      <label class="check">
        <input
          type="checkbox"
          checked={showRevoked}
          onChange={(event) => setShowRevoked(event.currentTarget.checked)}
        />
        Show revoked keys
      </label>
      <SortableTable
        caption="API keys"
        rows={keys}
        rowKey={(key) => key.key}
        initialSort={{ key: 'created', descending: true }}
        empty="No keys yet."
        columns={[
          {
            key: 'status',
            label: 'status',
            value: (key) => key.status,
            render: (key) =>
              key.status === 'active' ? (
                <button
                  type="button"
                  aria-pressed={selected === key.key}
                  aria-label={`Manage key ${key.name || key.key}`}
                  onClick={() => setSelected(selected === key.key ? undefined : key.key)}
                >
                  Manage
                </button>
              ) : (
                'revoked'
              ),
          },
          { key: 'key', label: 'key', value: (key) => key.key, render: (key) => <code>{key.key}</code> },
          { key: 'name', label: 'name', value: (key) => key.name || '–' },
          { key: 'account', label: 'account', value: (key) => key.account },
          { key: 'plan', label: 'plan', value: (key) => key.plan },
          {
            key: 'used',
            label: 'used today',
            numeric: true,
            value: (key) => data.usedToday.get(key.key) ?? 0,
            render: (key) => {
              const max = limit(key)
              const used = formatInteger(data.usedToday.get(key.key) ?? 0)
              return max === null ? used : `${used} / ${formatInteger(max)}`
            },
          },
          {
            key: 'perSecond',
            label: 'credits/s',
            numeric: true,
            value: (key) =>
              key.creditsPerSecond ??
              data.plans[key.plan]?.creditsPerSecond ??
              key.accountCreditsPerSecond ??
              0,
          },
          {
            key: 'switches',
            label: 'switches',
            value: (key) => switches(key) || '–',
            render: (key) => <span class="wrap">{switches(key) || '–'}</span>,
          },
          { key: 'lastUsed', label: 'last used (UTC)', value: (key) => data.lastUsed.get(key.key) ?? '–' },
          { key: 'created', label: 'created', value: (key) => key.createdAt.slice(0, 10) },
        ]}
      />
      {editing && (
        <KeyEditor
          key={editing.key}
          apiKey={editing}
          call={api}
          path={`admin/keys/${editing.key}`}
          networks={data.networks}
          onChanged={reload}
          onClose={() => setSelected(undefined)}
        />
      )}
    </section>
  )
}

function switches(key: KeyView): string {
  return [
    key.failover ? 'failover' : '',
    key.hasSecret ? (key.requireSecret ? 'secret required' : 'secret') : '',
    key.jwt.required ? 'JWT required' : '',
    key.networks.length > 0 ? `networks: ${key.networks.join(', ')}` : '',
    ...Object.entries(key.allowlists).map(([kind, entries]) =>
      entries.length > 0 ? `${kind}: ${entries.length}` : '',
    ),
  ]
    .filter(Boolean)
    .join(', ')
}

function CreateKey(props: { plans: string[]; onCreated: () => void }) {
  const [error, setError] = useState<string | undefined>(undefined)
  const [created, setCreated] = useState<{ key: string; secret?: string } | undefined>(undefined)
  const [busy, setBusy] = useState(false)

  async function submit(event: SubmitEvent) {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    const text = (name: string) => String(form.get(name) ?? '').trim()
    const number = (name: string) => (text(name) === '' ? undefined : Number(text(name)))
    const body = {
      plan: text('plan'),
      ...(text('name') ? { name: text('name') } : {}),
      ...(text('account') ? { account: text('account') } : {}),
      ...(number('dailyCredits') === undefined ? {} : { dailyCredits: number('dailyCredits') }),
      ...(number('creditsPerSecond') === undefined ? {} : { creditsPerSecond: number('creditsPerSecond') }),
      secret: form.get('secret') === 'on',
      failover: form.get('failover') === 'on',
    }
    setBusy(true)
    setError(undefined)
    try {
      const answer = await api<KeyView & { secret?: string }>('admin/keys', { method: 'POST', body })
      setCreated({ key: answer.key, ...(answer.secret ? { secret: answer.secret } : {}) })
      ;(event.target as HTMLFormElement).reset()
      props.onCreated()
    } catch (err) {
      setError(messageOf(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <details class="panel" open>
      <summary>Create a key</summary>
      <form class="grid-form" onSubmit={submit} aria-label="Create a key">
        <label>
          Plan
          <select name="plan" defaultValue="core">
            {props.plans.map((plan) => (
              <option key={plan} value={plan}>
                {plan}
              </option>
            ))}
          </select>
        </label>
        <label>
          Name
          <input name="name" autoComplete="off" maxLength={100} />
        </label>
        <label>
          Account (existing or new; empty: a new one)
          <input name="account" autoComplete="off" maxLength={100} />
        </label>
        <label>
          Daily credits
          <input name="dailyCredits" type="number" min="1" step="1" inputMode="numeric" />
        </label>
        <label>
          Credits per second
          <input name="creditsPerSecond" type="number" min="1" step="1" inputMode="numeric" />
        </label>
        <label class="check">
          <input name="secret" type="checkbox" /> Make a secret (shown once)
        </label>
        <label class="check">
          <input name="failover" type="checkbox" /> Partner failover for every request
        </label>
        <div class="actions">
          <button type="submit" disabled={busy}>
            Create key
          </button>
        </div>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
      {created && (
        <OnceSecret
          title="Key created"
          keyValue={created.key}
          secret={created.secret}
          onDone={() => setCreated(undefined)}
        />
      )}
    </details>
  )
}
