import { TollgateError, unauthorizedCode } from './TollgateError.ts'

// The account API (/account/api): answered as `{"error": {"message"}}`, as the admin API is.

/** No account token, or one that is wrong or revoked: the message never says which. */
export class AccountTokenRequiredError extends TollgateError {
  override name = 'AccountTokenRequiredError'
  constructor() {
    super(unauthorizedCode, 401, 'account token required: Authorization: Bearer <account token>', {
      wwwAuthenticate: 'Bearer realm="account"',
    })
  }
}

/** Alert settings that cannot be put in place: the message says why. */
export class AlertSettingsError extends TollgateError {
  override name = 'AlertSettingsError'
  constructor(message: string) {
    super(-32600, 400, message)
  }
}

/**
 * A request that changes something, signed in by the portal's session cookie, without the session's
 * CSRF token in `x-csrf-token`: it may come from another site's page, so it is refused.
 */
export class AccountCsrfError extends TollgateError {
  override name = 'AccountCsrfError'
  constructor() {
    super(-32600, 403, 'missing or wrong x-csrf-token for this session: reload the page')
  }
}
