import { Buffer } from 'node:buffer'
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

export type DashboardSession = { expiresAtMs: number; csrfToken: string }

export type DashboardSessions = {
  /** A new session's cookie value when `token` is the admin token; undefined otherwise. */
  signIn(token: string): { cookie: string; session: DashboardSession } | undefined
  /** The session a cookie value names, while it is signed, unexpired and not signed out. */
  verify(cookie: string | undefined): DashboardSession | undefined
  signOut(cookie: string | undefined): void
  ttlMs: number
}

export type DashboardSessionsOptions = { token: string; ttlMs: number; now: () => number }

/**
 * Dashboard sessions as signed cookie values, `<expiresAtMs>.<nonce>.<mac>`, MACed with a key made
 * from the admin token: every instance that shares the token accepts them (nothing is stored), and a
 * new admin token ends them all. The CSRF token is a second MAC of the nonce, so a page can only
 * learn it from the session endpoint, which a cross-site page cannot read. Signed-out sessions are
 * remembered by this process until they expire.
 */
export function createDashboardSessions(options: DashboardSessionsOptions): DashboardSessions {
  const { ttlMs, now } = options
  const macKey = createHash('sha256').update(`tollgate dashboard session\0${options.token}`).digest()
  const tokenDigest = digest(options.token)
  const signedOut = new Map<string, number>()

  const mac = (purpose: string, value: string) =>
    createHmac('sha256', macKey).update(`${purpose}\0${value}`).digest('base64url')

  function sessionOf(expiresAtMs: number, nonce: string): DashboardSession {
    return { expiresAtMs, csrfToken: mac('csrf', nonce) }
  }

  return {
    ttlMs,
    signIn(token) {
      if (!timingSafeEqual(digest(token), tokenDigest)) return undefined
      const expiresAtMs = now() + ttlMs
      const nonce = randomBytes(18).toString('base64url')
      const payload = `${expiresAtMs}.${nonce}`
      return { cookie: `${payload}.${mac('session', payload)}`, session: sessionOf(expiresAtMs, nonce) }
    },
    verify(cookie) {
      const parsed = parse(cookie)
      if (!parsed || parsed.expiresAtMs <= now() || signedOut.has(parsed.nonce)) return undefined
      const expected = Buffer.from(mac('session', `${parsed.expiresAtMs}.${parsed.nonce}`))
      const given = Buffer.from(parsed.mac)
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
      return sessionOf(parsed.expiresAtMs, parsed.nonce)
    },
    signOut(cookie) {
      const parsed = parse(cookie)
      if (!parsed) return
      const nowMs = now()
      for (const [nonce, expiresAtMs] of signedOut) if (expiresAtMs <= nowMs) signedOut.delete(nonce)
      signedOut.set(parsed.nonce, parsed.expiresAtMs)
    },
  }
}

function parse(cookie: string | undefined) {
  const match = cookie === undefined ? null : /^(\d{1,16})\.([\w-]{24})\.([\w-]{43})$/.exec(cookie)
  if (!match) return undefined
  return { expiresAtMs: Number(match[1]), nonce: match[2] as string, mac: match[3] as string }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}
