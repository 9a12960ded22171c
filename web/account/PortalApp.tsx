import type { ComponentType } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { messageOf } from '../api.ts'
import { loadSession, type Session, signOut, whenSignedOut } from './accountApi.ts'
import { PortalAlertsPage } from './pages/PortalAlertsPage.tsx'
import { PortalKeysPage } from './pages/PortalKeysPage.tsx'
import { PortalOverviewPage } from './pages/PortalOverviewPage.tsx'
import { PortalRequestsPage } from './pages/PortalRequestsPage.tsx'
import { PortalSignInPage } from './pages/PortalSignInPage.tsx'
import { PortalUsagePage } from './pages/PortalUsagePage.tsx'

/** What every portal page is given: the signed-in account's name. */
export type PortalPageProps = { account: string }

/**
 * The portal's pages by their address (`#/keys`), in the order of the menu: a page is one line
 * here. The first is where a sign-in lands.
 */
const pages: Record<string, { label: string; Page: ComponentType<PortalPageProps> }> = {
  overview: { label: 'Overview', Page: PortalOverviewPage },
  keys: { label: 'Keys', Page: PortalKeysPage },
  usage: { label: 'Usage', Page: PortalUsagePage },
  requests: { label: 'Requests', Page: PortalRequestsPage },
  alerts: { label: 'Alerts', Page: PortalAlertsPage },
}

function currentPage(): string {
  const name = location.hash.replace(/^#\/?/, '')
  return Object.hasOwn(pages, name) ? name : 'overview'
}

/** The key holders' portal at /account: sign in with the account token, then the account's pages. */
export function PortalApp() {
  const [session, setSession] = useState<Session | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [page, setPage] = useState(currentPage)

  useEffect(() => {
    whenSignedOut(() => setSession({ signedIn: false }))
    loadSession().then(setSession, (err: unknown) => setError(messageOf(err)))
    const onHash = () => setPage(currentPage())
    addEventListener('hashchange', onHash)
    return () => removeEventListener('hashchange', onHash)
  }, [])

  const shown = pages[page] ?? (pages.overview as (typeof pages)[string])
  useEffect(() => {
    document.title = `${shown.label} · tollgate account`
  }, [shown])

  if (session === undefined) return <p role="status">{error ?? 'Loading…'}</p>
  if (!session.signedIn) return <PortalSignInPage oidc={session.oidc === true} onSignedIn={setSession} />
  const { Page } = shown
  return (
    <>
      <a class="skip" href="#main">
        Skip to the page
      </a>
      <header class="top">
        <span class="brand">tollgate</span>
        <span class="account" data-testid="account-name">
          {session.account}
        </span>
        <nav aria-label="Account pages">
          {Object.entries(pages).map(([name, { label }]) => (
            <a key={name} href={`#/${name}`} aria-current={name === page ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <button
          type="button"
          class="link"
          onClick={() => signOut().finally(() => setSession({ signedIn: false }))}
        >
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page account={session.account} />
      </main>
    </>
  )
}
