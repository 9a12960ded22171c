import { TollgateError, unauthorizedCode } from './TollgateError.ts'

// The admin API and the CLI: answered as `{"error": {"message"}}`; the CLI prints the message.

export class AdminTokenRequiredError extends TollgateError {
  override name = 'AdminTokenRequiredError'
  constructor() {
    super(unauthorizedCode, 401, 'admin token required: Authorization: Bearer <token>')
  }
}

/**
 * A dashboard sign-in link (`/dashboard?token=...`) whose token is not the admin token: a link from
 * an earlier start of the embedded devnet (it makes a new token at each start), or a mistyped one.
 */
export class SignInLinkError extends TollgateError {
  override name = 'SignInLinkError'
  constructor() {
    super(
      unauthorizedCode,
      401,
      "this sign-in link's token is not the admin token (the embedded devnet makes a new one at each start: open the link its last start printed)",
    )
  }
}

/** An admin request whose body is not JSON, or not the JSON the operation takes. */
export class AdminRequestError extends TollgateError {
  override name = 'AdminRequestError'
  constructor(message: string) {
    super(-32600, 400, message)
  }
}

export class UnknownAllowlistKindError extends TollgateError {
  override name = 'UnknownAllowlistKindError'
  /** `kind`: what the path named, if anything; `kinds`: the list of valid ones, for the message. */
  constructor(kind: string | undefined, kinds: string) {
    super(
      -32600,
      404,
      `${kind === undefined ? '' : `unknown allowlist kind '${kind}'; `}allowlist kinds: ${kinds}`,
    )
  }
}

/** A key operation its rules refuse; the message says why. */
export class KeyAdminError extends TollgateError {
  override name = 'KeyAdminError'
  constructor(message: string) {
    super(-32600, 400, message)
  }
}

export class NoActiveKeyError extends TollgateError {
  override name = 'NoActiveKeyError'
  constructor() {
    super(-32600, 404, 'no active key with that value')
  }
}

/** The store refused a new key: its account is missing or already holds the plan's keys. */
export class KeyConflictError extends TollgateError {
  override name = 'KeyConflictError'
  constructor(message: string) {
    super(-32600, 409, message)
  }
}

export class AllowlistEntryError extends TollgateError {
  override name = 'AllowlistEntryError'
  constructor(message: string) {
    super(-32602, 400, message)
  }
}

/** /dashboard on an install whose dashboard was never built (npm install builds it). */
export class DashboardNotBuiltError extends TollgateError {
  override name = 'DashboardNotBuiltError'
  constructor() {
    super(-32603, 503, 'the dashboard is not built: run npm run build')
  }
}

/** `accounts show`, `accounts token` and /admin/accounts/NAME naming no account. */
export class NoAccountError extends TollgateError {
  override name = 'NoAccountError'
  constructor() {
    super(-32600, 404, 'no account with that name')
  }
}
