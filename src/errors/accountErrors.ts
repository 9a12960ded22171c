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
