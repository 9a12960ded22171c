import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { messageOf } from '../api.ts'
import { allowlistKinds, type KeyView } from '../keyTypes.ts'
import { OnceSecret } from '../OnceSecret.tsx'

/** A call to the API the editor works through: the dashboard's (web/api.ts) or the portal's. */
export type KeyCall = <T>(path: string, init?: { method?: string; body?: unknown }) => Promise<T>

type EditorProps = {
  apiKey: KeyView
  /** The API and this key's path in it: `admin/keys/KEY` (the dashboard), `keys/KEY` (the portal). */
  call: KeyCall
  path: string
  /**
   * The operator's choices, failover and networks (the dashboard); undefined for a key holder,
   * whose account API leaves them out.
   */
  networks: string[] | undefined
  onChanged: () => void
  onClose: () => void
}

/**
 * Every operation of `tollgate keys` on one key, through the admin API or the account API (their
 * checks, their messages).
 */
export function KeyEditor({ apiKey, call: api, path, networks, onChanged, onClose }: EditorProps) {
  const [secret, setSecret] = useState<string | undefined>(undefined)
  const [confirmRevoke, setConfirmRevoke] = useState(false)
  const label = apiKey.name || apiKey.key

  return (
    <section class="panel editor" aria-labelledby="editor-title">
      <div class="editor-head">
        <h2 id="editor-title">
          Key <code>{apiKey.key}</code> {apiKey.name && <span class="muted">({apiKey.name})</span>}
        </h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>

      <Action onChanged={onChanged} title="Secret">
        {(run) => (
          <>
            <p>{apiKey.hasSecret ? 'The key has a secret.' : 'The key has no secret.'}</p>
            <button
              type="button"
              onClick={() =>
                run(async () => {
                  setSecret(
                    (await api<{ secret: string }>(`${path}/rotate-secret`, { method: 'POST' })).secret,
                  )
                })
              }
            >
              {apiKey.hasSecret ? 'Rotate the secret' : 'Make a secret'}
            </button>
            {secret && (
              <OnceSecret
                title="New secret"
                keyValue={apiKey.key}
                secret={secret}
                onDone={() => setSecret(undefined)}
              />
            )}
          </>
        )}
      </Action>

      <Action onChanged={onChanged} title="Limits">
        {(run) => (
          <form
            class="grid-form"
            aria-label={`Limits of ${label}`}
            onSubmit={(event) => {
              event.preventDefault()
              const form = new FormData(event.currentTarget)
              run(() =>
                api(path, {
                  method: 'PATCH',
                  body: {
                    dailyCredits: Number(form.get('dailyCredits') || 0),
                    creditsPerSecond: Number(form.get('creditsPerSecond') || 0),
                    ...(networks ? { failover: form.get('failover') === 'on' } : {}),
                  },
                }),
              )
            }}
          >
            <label>
              Daily credits (0: the plan's)
              <input
                name="dailyCredits"
                type="number"
                min="0"
                step="1"
                defaultValue={String(apiKey.dailyCredits ?? 0)}
              />
            </label>
            <label>
              Credits per second (0: the plan's)
              <input
                name="creditsPerSecond"
                type="number"
                min="0"
                step="1"
                defaultValue={String(apiKey.creditsPerSecond ?? 0)}
              />
            </label>
            {networks && (
              <label class="check">
                <input name="failover" type="checkbox" defaultChecked={apiKey.failover} /> Partner failover
                for every request
              </label>
            )}
            <div class="actions">
              <button type="submit">Save limits</button>
            </div>
          </form>
        )}
      </Action>

      <Action onChanged={onChanged} title="Security">
        {(run) => (
          <form
            class="grid-form"
            aria-label={`Security of ${label}`}
            onSubmit={(event) => {
              event.preventDefault()
              const form = new FormData(event.currentTarget)
              const audience = String(form.get('jwtAudience') ?? '').trim()
              run(() =>
                api(path, {
                  method: 'PATCH',
                  body: {
                    requireSecret: form.get('requireSecret') === 'on',
                    requireJwt: form.get('requireJwt') === 'on',
                    jwtAudience: audience === '' ? null : audience,
                  },
                }),
              )
            }}
          >
            <label class="check">
              <input name="requireSecret" type="checkbox" defaultChecked={apiKey.requireSecret} /> Require the
              secret
            </label>
            <label class="check">
              <input name="requireJwt" type="checkbox" defaultChecked={apiKey.jwt.required} /> Require a JWT
            </label>
            <label>
              JWT audience (empty: any)
              <input name="jwtAudience" defaultValue={apiKey.jwt.audience ?? ''} autoComplete="off" />
            </label>
            <div class="actions">
              <button type="submit">Save security</button>
            </div>
          </form>
        )}
      </Action>

      {networks && (
        <Action onChanged={onChanged} title="Networks">
          {(run) => (
            <form
              aria-label={`Networks of ${label}`}
              onSubmit={(event) => {
                event.preventDefault()
                const form = new FormData(event.currentTarget)
                run(() =>
                  api(path, { method: 'PATCH', body: { networks: form.getAll('network').map(String) } }),
                )
              }}
            >
              <fieldset>
                <legend>Networks the key may use (none ticked: every network)</legend>
                {networks.map((network) => (
                  <label key={network} class="check">
                    <input
                      type="checkbox"
                      name="network"
                      value={network}
                      defaultChecked={apiKey.networks.includes(network)}
                    />{' '}
                    {network}
                  </label>
                ))}
              </fieldset>
              <button type="submit">Save networks</button>
            </form>
          )}
        </Action>
      )}

      <Action onChanged={onChanged} title="Allowlists">
        {(run) => (
          <div class="allowlists">
            {allowlistKinds.map(({ kind, path: kindPath, label: kindLabel, hint }) => {
              const entries = apiKey.allowlists[kind]
              return (
                <div key={kind} class="allowlist">
                  <h4 id={`allowlist-${kind}`}>{kindLabel}</h4>
                  <ul aria-labelledby={`allowlist-${kind}`}>
                    {entries.length === 0 && <li class="muted">empty: no restriction</li>}
                    {entries.map((entry) => (
                      <li key={entry}>
                        <code>{entry}</code>{' '}
                        <button
                          type="button"
                          aria-label={`Remove ${entry} from ${kindLabel}`}
                          onClick={() =>
                            run(() =>
                              api(`${path}/allowlists/${kindPath}`, {
                                method: 'DELETE',
                                body: { entries: [entry] },
                              }),
                            )
                          }
                        >
                          Remove
                        </button>
                      </li>
                    ))}
                  </ul>
                  <form
                    class="inline-form"
                    aria-label={`Add to ${kindLabel}`}
                    onSubmit={(event) => {
                      event.preventDefault()
                      const form = event.currentTarget
                      const entered = String(new FormData(form).get('entries') ?? '')
                        .split(/[\s,]+/)
                        .filter(Boolean)
                      run(async () => {
                        await api(`${path}/allowlists/${kindPath}`, {
                          method: 'POST',
                          body: { entries: entered },
                        })
                        form.reset()
                      })
                    }}
                  >
                    <label>
                      Add {kindLabel.toLowerCase()}
                      <input name="entries" placeholder={hint} autoComplete="off" />
                    </label>
                    <button type="submit">Add</button>
                  </form>
                </div>
              )
            })}
          </div>
        )}
      </Action>

      <Action onChanged={onChanged} title="JWT public keys">
        {(run) => (
          <>
            <ul>
              {apiKey.jwt.publicKeys.length === 0 && <li class="muted">none</li>}
              {apiKey.jwt.publicKeys.map(({ kid, alg }) => (
                <li key={kid}>
                  <code>{kid}</code> ({alg}){' '}
                  <button
                    type="button"
                    aria-label={`Remove JWT key ${kid}`}
                    onClick={() =>
                      run(() => api(`${path}/jwt-keys/${encodeURIComponent(kid)}`, { method: 'DELETE' }))
                    }
                  >
                    Remove
                  </button>
                </li>
              ))}
            </ul>
            <form
              class="grid-form"
              aria-label="Add a JWT public key"
              onSubmit={(event) => {
                event.preventDefault()
                const form = event.currentTarget
                const data = new FormData(form)
                run(async () => {
                  await api(`${path}/jwt-keys`, {
                    method: 'POST',
                    body: {
                      kid: String(data.get('kid') ?? ''),
                      publicKey: String(data.get('publicKey') ?? ''),
                    },
                  })
                  form.reset()
                })
              }}
            >
              <label>
                Key id (kid)
                <input name="kid" autoComplete="off" />
              </label>
              <label class="wide">
                PEM public key (RS256 or ES256)
                <textarea name="publicKey" rows={4} placeholder="-----BEGIN PUBLIC KEY-----" />
              </label>
              <div class="actions">
                <button type="submit">Add JWT key</button>
              </div>
            </form>
          </>
        )}
      </Action>

      <Action onChanged={onChanged} title="Revoke">
        {(run) =>
          confirmRevoke ? (
            <p>
              Requests with this key will be refused.{' '}
              <button type="button" class="danger" onClick={() => run(() => api(path, { method: 'DELETE' }))}>
                Revoke {label}
              </button>{' '}
              <button type="button" onClick={() => setConfirmRevoke(false)}>
                Cancel
              </button>
            </p>
          ) : (
            <button type="button" class="danger" onClick={() => setConfirmRevoke(true)}>
              Revoke…
            </button>
          )
        }
      </Action>
    </section>
  )
}

/** One part of the editor: runs its change, then reloads the keys, or shows the refusal's message. */
function Action(props: {
  title: string
  onChanged: () => void
  children: (run: (change: () => Promise<unknown>) => void) => ComponentChildren
}) {
  const [error, setError] = useState<string | undefined>(undefined)
  const [done, setDone] = useState(false)
  const run = (change: () => Promise<unknown>) => {
    setError(undefined)
    setDone(false)
    change().then(
      () => {
        setDone(true)
        props.onChanged()
      },
      (err: unknown) => setError(messageOf(err)),
    )
  }
  return (
    <div class="action">
      <h3>{props.title}</h3>
      {props.children(run)}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {done && !error && (
        <p class="ok" role="status">
          Saved.
        </p>
      )}
    </div>
  )
}
