import { Buffer } from 'node:buffer'
import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * What a sign-in through the identity provider must find again at the callback: the state sent with
 * the browser (CSRF), the nonce the ID token must carry (replay) and the PKCE code verifier. Each is
 * a base64url string of 43 characters (32 random bytes).
 */
export type OidcPending = { state: string; nonce: string; codeVerifier: string; expiresAtMs: number }

/** The cookie that carries a sign-in from /account/api/oidc/start to its callback, and nowhere else. */
export const oidcStateCookie = 'tollgate_oidc'

/** How long a started sign-in may take at the provider (typing a password, a second factor). */
export const oidcStateTtlMs = 10 * 60_000

/**
 * The MAC key of the state cookie: derived from the database's secret hash key under a label of its
 * own, so every instance sharing the database accepts a callback another instance started, and no
 * MAC made for another purpose (a portal session) passes for this one.
 */
export function oidcStateMacKey(secretHashKey: Buffer): Buffer {
  return createHmac('sha256', secretHashKey).update('tollgate oidc state').digest()
}

/**
 * The cookie value: `<state>.<nonce>.<codeVerifier>.<expiresAtMs>.<mac>`. Nothing is stored on the
 * server, so the callback may land on any instance. It is signed, not encrypted: the values are the
 * browser's own, and worth nothing without the code the provider gives that same browser.
 */
export function sealOidcState(pending: OidcPending, macKey: Buffer): string {
  const payload = `${pending.state}.${pending.nonce}.${pending.codeVerifier}.${pending.expiresAtMs}`
  return `${payload}.${mac(macKey, payload)}`
}

/** The pending sign-in a cookie value holds, while its MAC is right and it has not expired. */
export function openOidcState(
  value: string | undefined,
  macKey: Buffer,
  nowMs: number,
): OidcPending | undefined {
  const match =
    value === undefined || value.length > 256
      ? null
      : /^(([\w-]{43})\.([\w-]{43})\.([\w-]{43})\.(\d{1,16}))\.([\w-]{43})$/.exec(value)
  if (!match) return undefined
  const expected = Buffer.from(mac(macKey, match[1] as string))
  const given = Buffer.from(match[6] as string)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
  const expiresAtMs = Number(match[5])
  if (expiresAtMs <= nowMs) return undefined
  return {
    state: match[2] as string,
    nonce: match[3] as string,
    codeVerifier: match[4] as string,
    expiresAtMs,
  }
}

/**
 * The Set-Cookie value for the state cookie ('' and 0 clear it): HttpOnly, SameSite=Lax (the
 * provider's redirect back is a top-level navigation, which carries it), Secure over TLS, and sent
 * to /account/api/oidc only.
 */
export function oidcStateCookieHeader(value: string, maxAgeSeconds: number, secure: boolean): string {
  return [
    `${oidcStateCookie}=${value}`,
    'Path=/account/api/oidc',
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(secure ? ['Secure'] : []),
  ].join('; ')
}

function mac(macKey: Buffer, payload: string): string {
  return createHmac('sha256', macKey).update(`oidc-state\0${payload}`).digest('base64url')
}
