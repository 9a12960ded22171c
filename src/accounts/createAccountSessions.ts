import { Buffer } from 'node:buffer'
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Account } from '../auth/apiKey.ts'

export type AccountSession = {
  accountId: number
  accountName: string
  /** When it was signed in (its expiry less the sessions' lifetime). */
  issuedAtMs: number
  expiresAtMs: number
  csrfToken: string
}

export type AccountSessions = {
  /** A new session for an account its holder proved (an account token, an identity provider). */
  signIn(account: Account): { cookie: string; session: AccountSession }
  /** The session a cookie value names, while it is signed, unexpired and not signed out here. */
  verify(cookie: string | undefined): AccountSession | undefined
  signOut(cookie: string | undefined): void
  ttlMs: number
}

/** The portal's session cookie: sent by the browser to /account/... only. */
export const accountSessionCookie = 'tollgate_account_session'

/** Signed-out sessions this process remembers at most (the oldest are forgotten first). */
const maxSignedOut = 10_000

/**
 * The MAC key of account sessions: derived from the database's secret hash key (getSecretHashKey)
 * under a label of its own, so every instance sharing the database accepts the same cookies with
 * nothing to configure, and no MAC made for one purpose passes for another.
 */
export function accountSessionMacKey(secretHashKey: Buffer): Buffer {
  return createHmac('sha256', secretHashKey).update('tollgate account session').digest()
}

/**
 * Account portal sessions as signed cookie values, `<accountId>.<name>.<expiresAtMs>.<nonce>.<mac>`
 * (the name base64url): nothing is stored, so any instance with the same MAC key accepts them. The
 * CSRF token is a second MAC of the nonce: a page learns it only from GET /account/api/session,
 * which another site's page cannot read. Signed-out sessions are remembered by this process until
 * they expire (at most maxSignedOut of them); a cookie is only what it says until the account is
 * read: the caller checks that the account still exists under that id.
 */
export function createAccountSessions(options: {
  macKey: Buffer
  ttlMs: number
  now: () => number
}): AccountSessions {
  const { macKey, ttlMs, now } = options
  const signedOut = new Map<string, number>()

  const mac = (purpose: string, value: string) =>
    createHmac('sha256', macKey).update(`${purpose}\0${value}`).digest('base64url')

  function sessionOf(parsed: ParsedCookie): AccountSession {
    return {
      accountId: parsed.accountId,
      accountName: parsed.accountName,
      issuedAtMs: parsed.expiresAtMs - ttlMs,
      expiresAtMs: parsed.expiresAtMs,
      csrfToken: mac('csrf', parsed.nonce),
    }
  }

  /** The cookie's parts when its MAC is right and it has not expired. */
  function check(cookie: string | undefined): ParsedCookie | undefined {
    const parsed = parse(cookie)
    if (!parsed || parsed.expiresAtMs <= now()) return undefined
    const expected = Buffer.from(mac('session', parsed.payload))
    const given = Buffer.from(parsed.mac)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
    return parsed
  }

  return {
    ttlMs,
    signIn(account) {
      const expiresAtMs = now() + ttlMs
      const nonce = randomBytes(18).toString('base64url')
      const name = Buffer.from(account.name).toString('base64url')
      const payload = `${account.id}.${name}.${expiresAtMs}.${nonce}`
      const cookie = `${payload}.${mac('session', payload)}`
      const parsed = parse(cookie) as ParsedCookie
      return { cookie, session: sessionOf(parsed) }
    },
    verify(cookie) {
      const parsed = check(cookie)
      if (!parsed || signedOut.has(parsed.nonce)) return undefined
      return sessionOf(parsed)
    },
    signOut(cookie) {
      // only a signed cookie is remembered: made-up ones cannot fill the memory
      const parsed = check(cookie)
      if (!parsed) return
      const nowMs = now()
      for (const [nonce, expiresAtMs] of signedOut) if (expiresAtMs <= nowMs) signedOut.delete(nonce)
      if (signedOut.size >= maxSignedOut) {
        const oldest = signedOut.keys().next()
        if (!oldest.done) signedOut.delete(oldest.value)
      }
      signedOut.set(parsed.nonce, parsed.expiresAtMs)
    },
  }
}

/**
 * The Set-Cookie value that gives the browser `value` for `maxAgeSeconds` (0 and '' clear it):
 * HttpOnly (no script reads it), SameSite=Lax (another site's page cannot send it with a POST, yet
 * an identity provider's redirect back to /account keeps it), Secure over TLS, /account only.
 */
export function accountSessionCookieHeader(value: string, maxAgeSeconds: number, secure: boolean): string {
  return [
    `${accountSessionCookie}=${value}`,
    'Path=/account',
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(secure ? ['Secure'] : []),
  ].join('; ')
}

type ParsedCookie = {
  accountId: number
  accountName: string
  expiresAtMs: number
  nonce: string
  payload: string
  mac: string
}

function parse(cookie: string | undefined): ParsedCookie | undefined {
  // a name has at most 100 characters, at most 400 bytes: 534 in base64url
  const match =
    cookie === undefined || cookie.length > 700
      ? null
      : /^((\d{1,15})\.([\w-]{0,540})\.(\d{1,16})\.([\w-]{24}))\.([\w-]{43})$/.exec(cookie)
  if (!match) return undefined
  return {
    payload: match[1] as string,
    accountId: Number(match[2]),
    accountName: Buffer.from(match[3] as string, 'base64url').toString(),
    expiresAtMs: Number(match[4]),
    nonce: match[5] as string,
    mac: match[6] as string,
  }
}
