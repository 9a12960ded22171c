import type * as OpenIdClient from 'openid-client'
import type { OidcConfig } from '../config/accountsSchema.ts'
import {
  OidcAnswerRejectedError,
  OidcProviderDeniedError,
  OidcProviderUnavailableError,
} from '../errors/oidcErrors.ts'
import { accountNamesOfClaim } from './matchOidcAccount.ts'
import type { OidcPending } from './oidcStateCookie.ts'

/** The relying party's two steps against the provider (openid-client under it). */
export type OidcClient = {
  /** Where the browser goes to sign in: the provider's authorization endpoint with `pending`'s state, nonce and PKCE challenge. */
  authorizationUrl(pending: OidcPending): Promise<URL>
  /**
   * The signed-in person's claims, after every check: the callback's `iss` and `state`, the code
   * exchanged with the PKCE verifier, the ID token's signature (the provider's published keys),
   * issuer, audience, nonce and expiry. A claim the ID token lacks is read from the userinfo
   * endpoint (many providers put only `sub` in the ID token).
   */
  claimsOf(callbackQuery: URLSearchParams, pending: OidcPending): Promise<Record<string, unknown>>
}

/**
 * How long the provider's discovery document is used before it is read again (its signing keys are
 * read again when a token names a key not seen, by openid-client).
 */
const metadataTtlMs = 3_600_000

/**
 * The provider's metadata is read lazily on the first sign-in (a provider that is down never stops
 * the gateway from starting), once for concurrent requests, and kept for metadataTtlMs; a failed
 * read is not kept, so the next sign-in tries again. Every request to the provider waits at most
 * `timeoutSeconds`. openid-client is loaded on the first sign-in too: a gateway without an identity
 * provider never carries it.
 */
export function createOidcClient(config: OidcConfig, now: () => number): OidcClient {
  const issuer = new URL(config.issuer)
  const scope = [...new Set(['openid', ...config.scopes])].join(' ')
  let discovered: { configuration: Promise<OpenIdClient.Configuration>; atMs: number } | undefined

  function discover(client: typeof OpenIdClient): Promise<OpenIdClient.Configuration> {
    if (discovered && now() - discovered.atMs < metadataTtlMs) return discovered.configuration
    const execute = [client.enableNonRepudiationChecks]
    // the schema lets http through only to this machine
    if (issuer.protocol === 'http:') execute.push(client.allowInsecureRequests)
    const configuration = client
      .discovery(
        issuer,
        config.clientId,
        { redirect_uris: [config.redirectUrl], response_types: ['code'] },
        config.clientSecret === undefined ? client.None() : client.ClientSecretBasic(config.clientSecret),
        { execute, timeout: config.timeoutSeconds },
      )
      .catch((err: unknown) => {
        if (discovered?.configuration === configuration) discovered = undefined
        throw new OidcProviderUnavailableError({ cause: err, logDetails: `discovery at ${issuer.href}` })
      })
    discovered = { configuration, atMs: now() }
    return configuration
  }

  return {
    async authorizationUrl(pending) {
      const client = await import('openid-client')
      return client.buildAuthorizationUrl(await discover(client), {
        redirect_uri: config.redirectUrl,
        scope,
        state: pending.state,
        nonce: pending.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
        code_challenge_method: 'S256',
      })
    },

    async claimsOf(callbackQuery, pending) {
      const client = await import('openid-client')
      const configuration = await discover(client)
      // the registered callback URL, never one made from the request's Host header
      const current = new URL(config.redirectUrl)
      current.search = callbackQuery.toString()
      try {
        const tokens = await client.authorizationCodeGrant(configuration, current, {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: pending.state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        })
        const idClaims = tokens.claims() as Record<string, unknown> & { sub: string }
        if (accountNamesOfClaim(idClaims, config.claim).length > 0) return idClaims
        if (!configuration.serverMetadata().userinfo_endpoint) return idClaims
        const userInfo = await client.fetchUserInfo(configuration, tokens.access_token, idClaims.sub)
        // the ID token's own claims (iss, aud, nonce) are the ones checked: they win
        return { ...userInfo, ...idClaims }
      } catch (err) {
        throw toOidcError(err, client)
      }
    },
  }
}

/** Error codes of openid-client that mean the provider did not answer as it should (not the answer's content). */
const unavailableCodes = new Set([
  'OAUTH_TIMEOUT',
  'OAUTH_ABORT',
  'OAUTH_RESPONSE_IS_NOT_CONFORM',
  'OAUTH_RESPONSE_IS_NOT_JSON',
])

/**
 * What the code exchange's failure means for the person: the provider sent an error back
 * (cancelled, not allowed), the provider is down or answered 5xx, or its answer failed a check.
 */
function toOidcError(err: unknown, client: typeof OpenIdClient): Error {
  if (err instanceof OidcProviderUnavailableError) return err
  if (err instanceof client.AuthorizationResponseError) {
    return new OidcProviderDeniedError({
      cause: err,
      logDetails: `${err.error}: ${err.error_description ?? ''}`,
    })
  }
  if (err instanceof client.ResponseBodyError) {
    const logDetails = `token endpoint ${err.status} ${err.error}: ${err.error_description ?? ''}`
    return err.status >= 500
      ? new OidcProviderUnavailableError({ cause: err, logDetails })
      : new OidcAnswerRejectedError({ cause: err, logDetails })
  }
  const code = err instanceof client.ClientError ? err.code : undefined
  // fetch's own failure (refused, reset, DNS) is a TypeError
  if (err instanceof TypeError || (code !== undefined && unavailableCodes.has(code))) {
    return new OidcProviderUnavailableError({ cause: err, logDetails: (err as Error).message })
  }
  return new OidcAnswerRejectedError({ cause: err, logDetails: `${code ?? ''} ${(err as Error).message}` })
}
