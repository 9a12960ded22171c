import type { CallGuard } from '../auth/authorize.ts'
import type { AuthFailureLimiter } from '../auth/createAuthFailureLimiter.ts'
import type { KeyEntry } from '../auth/createKeyRegistry.ts'
import { JwtExpiredError, KeyRevokedError } from '../errors/socketErrors.ts'
import { authorizeKeyRequest, type KeyRequest, type KeyRequestDeps } from './authorizeKeyRequest.ts'

/** What an open socket's calls run with: the key's current entry and what it allows this connection. */
export type SocketGrant = { key: KeyEntry; guard: CallGuard | undefined; failover: boolean }

/** The grant for the next message, or the close code and reason the socket must end with. */
export type SocketAccessResult =
  | { ok: true; grant: SocketGrant }
  /** The refusal that ends the socket (its close frame: toCloseFrame). */
  | { ok: false; refusal: unknown }

/** The JWT the upgrade was authenticated with, if any, and the clock its expiry is read on. */
export type SocketToken = {
  /** The token's `exp` in ms since the epoch; undefined: the upgrade sent no JWT. */
  expiresMs: number | undefined
  now: () => number
}

export type SocketAccess = {
  /**
   * The access as the key stands now: one map lookup while the key's entry is the one last checked;
   * after a change the upgrade's checks run again (once for every caller waiting).
   */
  current(): Promise<SocketAccessResult>
}

const revoked: SocketAccessResult = { ok: false, refusal: new KeyRevokedError() }
const expired: SocketAccessResult = { ok: false, refusal: new JwtExpiredError() }

/**
 * A re-check is not a new attempt: a rotated secret would otherwise count every open socket of the
 * key as a failure (locking the key and its clients out), and a client's unrelated failures would end
 * sockets it opened with the right secret.
 */
const notAnAttempt: AuthFailureLimiter = { retryAfterMs: () => 0, recordFailure: () => undefined }

/**
 * Keeps an open WebSocket in step with its key, so the key rules of HTTP hold for it too
 * (docs/compatibility.md §6): a revoked key ends it, and a changed key is authorized again with what
 * the upgrade sent (secret, JWT, origin, user agent, network). A refusal ends the socket with 1008
 * and the refusal's message; new limits and method or contract allowlists apply to the next call.
 * A socket opened with a JWT ends when the token expires (JwtExpiredError): from then on `current`
 * refuses, and the caller's timer (callAt) applies it unasked.
 */
export function createSocketAccess(
  deps: KeyRequestDeps,
  request: KeyRequest,
  initial: SocketGrant,
  token: SocketToken,
): SocketAccess {
  const recheckDeps: KeyRequestDeps = { ...deps, authFailures: notAnAttempt }
  let last: SocketAccessResult = { ok: true, grant: initial }
  let checking: Promise<SocketAccessResult> | undefined

  async function reauthorize(): Promise<SocketAccessResult> {
    try {
      const access = await authorizeKeyRequest(recheckDeps, request)
      last = access.ok
        ? { ok: true, grant: { key: access.key, guard: access.guard, failover: access.failover } }
        : // an unknown key is a revoked one; a key that is there refuses what the upgrade proved
          deps.keys.findActiveKey(request.key)
          ? { ok: false, refusal: access.error }
          : revoked
      return last
    } finally {
      checking = undefined
    }
  }

  return {
    async current() {
      if (!last.ok) return last
      if (token.expiresMs !== undefined && token.now() >= token.expiresMs) {
        last = expired
        return last
      }
      const entry = deps.keys.findActiveKey(request.key)
      if (entry === last.grant.key) return last
      if (!entry) {
        last = revoked
        return last
      }
      checking ??= reauthorize()
      return checking
    },
  }
}
