import { type ErrorOptions, TollgateError, unauthorizedCode } from './TollgateError.ts'

// Signing in to the account portal through an identity provider (/account/api/oidc/...): answered
// as the account API answers, `{"error": {"message"}}`, to the browser the provider sent back.

/**
 * A callback whose sign-in this browser did not start here, or started too long ago: no state
 * cookie, one that is not tollgate's (its MAC is wrong), expired, or another state than the one
 * the provider sent back.
 */
export class OidcStateError extends TollgateError {
  override name = 'OidcStateError'
  constructor(options: ErrorOptions = {}) {
    super(-32600, 400, 'this sign-in was not started in this browser, or took too long: start again', options)
  }
}

/** The provider sent the browser back with an error (the person cancelled, or may not use tollgate). */
export class OidcProviderDeniedError extends TollgateError {
  override name = 'OidcProviderDeniedError'
  constructor(options: ErrorOptions = {}) {
    super(unauthorizedCode, 401, 'the identity provider did not sign you in', options)
  }
}

/**
 * The provider's answer failed a check: the code was refused at its token endpoint (used before, or
 * expired), or the ID token's issuer, audience, nonce, signature or expiry is wrong.
 */
export class OidcAnswerRejectedError extends TollgateError {
  override name = 'OidcAnswerRejectedError'
  constructor(options: ErrorOptions = {}) {
    super(unauthorizedCode, 401, "the identity provider's answer failed its checks: start again", options)
  }
}

/** The signed-in person's claim names no account (or they have no such claim): nothing is made. */
export class OidcNoAccountError extends TollgateError {
  override name = 'OidcNoAccountError'
  constructor(claim: string, options: ErrorOptions = {}) {
    super(
      -32600,
      403,
      `no account matches your identity: the gateway's operator names your account in your '${claim}' claim`,
      options,
    )
  }
}

/** The claim is a list naming more than one account: which one is meant is not guessed. */
export class OidcAmbiguousAccountError extends TollgateError {
  override name = 'OidcAmbiguousAccountError'
  constructor(claim: string, options: ErrorOptions = {}) {
    super(
      -32600,
      403,
      `your '${claim}' claim names more than one account: the gateway's operator leaves one`,
      options,
    )
  }
}

/** The provider did not answer in time, or answered what is not OpenID Connect (its discovery, keys or token endpoint). */
export class OidcProviderUnavailableError extends TollgateError {
  override name = 'OidcProviderUnavailableError'
  constructor(options: ErrorOptions = {}) {
    super(-32603, 502, 'the identity provider cannot be reached: try again later', options)
  }
}
