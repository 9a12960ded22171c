import { type ErrorOptions, TollgateError, unauthorizedCode } from './TollgateError.ts'

// Authentication: a key missing, unknown, or refused by its own settings.

export class MissingKeyError extends TollgateError {
  override name = 'MissingKeyError'
  constructor() {
    super(unauthorizedCode, 401, 'project id required in the url')
  }
}

/** The Gas API's missing key: unlike JSON-RPC it takes the key as the HTTP Basic user name too. */
export class MissingGasApiKeyError extends TollgateError {
  override name = 'MissingGasApiKeyError'
  constructor() {
    super(
      unauthorizedCode,
      401,
      'API key required: send HTTP Basic auth (KEY:SECRET, secret optional) or use /v3/KEY/networks/...',
    )
  }
}

export class InvalidKeyError extends TollgateError {
  override name = 'InvalidKeyError'
  constructor(options?: ErrorOptions) {
    super(unauthorizedCode, 401, 'invalid project id', options)
  }
}

export class InvalidSecretError extends TollgateError {
  override name = 'InvalidSecretError'
  constructor(options?: ErrorOptions) {
    super(unauthorizedCode, 401, 'invalid project id or project secret', options)
  }
}

export class InvalidJwtError extends TollgateError {
  override name = 'InvalidJwtError'
  constructor(options?: ErrorOptions) {
    super(unauthorizedCode, 401, 'invalid JWT', options)
  }
}

/** Refused by the key's own settings: secret required, an allowlist, a network the key may not use. */
export class ProjectSettingsError extends TollgateError {
  override name = 'ProjectSettingsError'
  constructor(options?: ErrorOptions) {
    super(-32002, 403, 'rejected due to project ID settings', options)
  }
}
