import { z } from 'zod'

/** The callback every identity provider redirects back to: the path part of `redirectUrl`. */
const oidcCallbackPath = '/account/api/oidc/callback'

/** Host names an identity provider may be reached at over plain http (a provider on this machine). */
const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]'])

/** https, or http to this machine only (a provider run beside the gateway, or a test's). */
function isSafeIssuer(issuer: string): boolean {
  const url = new URL(issuer)
  return url.protocol === 'https:' || loopbackHosts.has(url.hostname)
}

/**
 * Sign-in to the account portal through the company's identity provider (OpenID Connect,
 * authorization code flow with PKCE): an account is the one a claim of the signed-in person names.
 */
const oidcSchema = z.strictObject({
  /** The provider's issuer URL, as its discovery document (`/.well-known/openid-configuration`) states it. */
  issuer: z
    .url({ protocol: /^https?$/, error: 'expected an https URL' })
    .refine(isSafeIssuer, { message: 'expected an https URL (http only to localhost)' }),
  /** The client id tollgate is registered under at the provider. */
  clientId: z.string().min(1),
  /**
   * The client's secret (or TOLLGATE_OIDC_CLIENT_SECRET); without one tollgate is a public client,
   * which PKCE alone protects (the provider must allow it).
   */
  clientSecret: z.string().min(1).optional(),
  /**
   * The public URL of the callback, as registered at the provider: the gateway's own address
   * (as browsers reach it) followed by /account/api/oidc/callback. Never guessed from a request's
   * Host header, which the client chooses.
   */
  redirectUrl: z
    .url({ protocol: /^https?$/, error: 'expected an http(s) URL' })
    .refine((url) => new URL(url).pathname === oidcCallbackPath && new URL(url).search === '', {
      message: `expected the gateway's public address followed by ${oidcCallbackPath}`,
    }),
  /**
   * The claim (in the ID token, else from the userinfo endpoint) whose value names the account, as
   * `tollgate keys show` names it; a list of names must name exactly one account. A dotted name
   * (`realm_access.roles`) reads a member of an object claim when no claim has the whole name.
   */
  claim: z.string().min(1).default('tollgate_account'),
  /** Scopes asked for; `openid` is always asked for. */
  scopes: z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'expected a scope token')).default([]),
  /** Longest wait for each request to the provider (discovery, its keys, the code exchange, userinfo). */
  timeoutSeconds: z.int().positive().max(60).default(10),
})

export const accountsSchema = z
  .strictObject({
    oidc: oidcSchema.optional(),
  })
  .prefault({})

export type OidcConfig = z.infer<typeof oidcSchema>
