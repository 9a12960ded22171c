import { useMemo, useState } from 'preact/hooks'
import { messageOf } from '../../api.ts'
import type { KeyView } from '../../keyTypes.ts'
import { OnceSecret } from '../../OnceSecret.tsx'
import { KeyEditor } from '../../pages/KeyEditor.tsx'
import { SortableTable } from '../../SortableTable.tsx'
import { usePolling } from '../../usePolling.ts'
import { accountApi } from '../accountApi.ts'

/** The account's keys by name: make one, and manage each (secret, limits, credentials, allowlists, revoke). */
export function PortalKeysPage() {
  const { data, error, reload } = usePolling(
    async () => (await accountApi<{ keys: KeyView[] }>('keys')).keys,
    0,
  )
  const [selected, setSelected] = useState<string | undefined>(undefined)
  const [showRevoked, setShowRevoked] = useState(false)
  const keys = useMemo(
    () => (data ?? []).filter((key) => showRevoked || key.status === 'active'),
    [data, showRevoked],
  )
  if (!data) return <p role="status">{error ?? 'Loading…'}</p>
  const editing = data.find((key) => key.key === selected && key.status === 'active')

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">Keys</h1>
      {error && <p class="error">{error}</p>}
      <CreateKey onCreated={reload} />
      <label class="check">
        <input
          type="checkbox"
          checked={showRevoked}
          onChange={(event) => setShowRevoked(event.currentTarget.checked)}
        />
        Show revoked keys
      </label>
      <SortableTable
        caption="Your keys"
        rows={keys}
        rowKey={(key) => key.key}
        initialSort={{ key: 'created', descending: false }}
        empty="No keys yet."
        columns={[
          {
            key: 'name',
            label: 'name',
            value: (key) => key.name || '–',
            render: (key) =>
              key.status === 'active' ? (
                <button
                  type="button"
                  aria-pressed={selected === key.key}
                  aria-label={`Manage key ${key.name || key.key}`}
                  onClick={() => setSelected(selected === key.key ? undefined : key.key)}
                >
                  {key.name || '(no name)'}
                </button>
              ) : (
                <span>{key.name || '(no name)'} (revoked)</span>
              ),
          },
          {
            key: 'key',
            label: 'key',
            value: (key) => key.key,
            render: (key) => <code class="wrap">{key.key}</code>,
          },
          { key: 'security', label: 'credentials', value: (key) => credentials(key) },
          { key: 'allowlists', label: 'allowlists', value: (key) => allowlists(key) || '–' },
          { key: 'created', label: 'created', value: (key) => key.createdAt.slice(0, 10) },
        ]}
      />
      {editing && (
        <KeyEditor
          key={editing.key}
          apiKey={editing}
          call={accountApi}
          path={`keys/${editing.key}`}
          networks={undefined}
          onChanged={reload}
          onClose={() => setSelected(undefined)}
        />
      )}
    </section>
  )
}

function credentials(key: KeyView): string {
  if (key.jwt.required) return 'JWT required'
  if (key.requireSecret) return 'secret required'
  return key.hasSecret ? 'secret (optional)' : 'key only'
}

function allowlists(key: KeyView): string {
  return Object.entries(key.allowlists)
    .map(([kind, entries]) => (entries.length > 0 ? `${kind}: ${entries.length}` : ''))
    .filter(Boolean)
    .join(', ')
}

function CreateKey(props: { onCreated: () => void }) {
  const [error, setError] = useState<string | undefined>(undefined)
  const [created, setCreated] = useState<{ key: string; secret?: string } | undefined>(undefined)
  const [busy, setBusy] = useState(false)

  async function submit(event: SubmitEvent) {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const name = String(data.get('name') ?? '').trim()
    setBusy(true)
    setError(undefined)
    try {
      const answer = await accountApi<KeyView & { secret?: string }>('keys', {
        method: 'POST',
        body: { ...(name ? { name } : {}), secret: data.get('secret') === 'on' },
      })
      setCreated({ key: answer.key, ...(answer.secret ? { secret: answer.secret } : {}) })
      form.reset()
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
          Name
          <input name="name" autoComplete="off" maxLength={100} />
        </label>
        <label class="check">
          <input name="secret" type="checkbox" /> Make a secret (shown once)
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
