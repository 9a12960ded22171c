import { useEffect, useState } from 'preact/hooks'
import { loadSession, messageOf, signOut, whenSignedOut } from './api.ts'
import { GasPage } from './pages/GasPage.tsx'
import { KeysPage } from './pages/KeysPage.tsx'
import { OverviewPage } from './pages/OverviewPage.tsx'
import { RequestsPage } from './pages/RequestsPage.tsx'
import { SignInPage } from './pages/SignInPage.tsx'
import { UsagePage } from './pages/UsagePage.tsx'

const pages = {
  overview: { label: 'Overview', Page: OverviewPage },
  usage: { label: 'Usage', Page: UsagePage },
  keys: { label: 'Keys', Page: KeysPage },
  requests: { label: 'Requests', Page: RequestsPage },
  gas: { label: 'Gas', Page: GasPage },
} as const
type PageName = keyof typeof pages

function currentPage(): PageName {
  const name = location.hash.replace(/^#\/?/, '')
  return name in pages ? (name as PageName) : 'overview'
}

export function App() {
  const [signedIn, setSignedIn] = useState<boolean | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [page, setPage] = useState<PageName>(currentPage)

  useEffect(() => {
    whenSignedOut(() => setSignedIn(false))
    loadSession().then(setSignedIn, (err: unknown) => setError(messageOf(err)))
    const onHash = () => setPage(currentPage())
    addEventListener('hashchange', onHash)
    return () => removeEventListener('hashchange', onHash)
  }, [])

  useEffect(() => {
    document.title = `${pages[page].label} · tollgate`
  }, [page])

  if (signedIn === undefined) return <p role="status">{error ?? 'Loading…'}</p>
  if (!signedIn) return <SignInPage onSignedIn={() => setSignedIn(true)} />
  const { Page } = pages[page]
  return (
    <>
      <a class="skip" href="#main">
        Skip to the page
      </a>
      <header class="top">
        <span class="brand">tollgate</span>
        <nav aria-label="Dashboard pages">
          {Object.entries(pages).map(([name, { label }]) => (
            <a key={name} href={`#/${name}`} aria-current={name === page ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <button type="button" class="link" onClick={() => signOut().finally(() => setSignedIn(false))}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page />
      </main>
    </>
  )
}
