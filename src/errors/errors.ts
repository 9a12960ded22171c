/**
 * Every error the gateway answers with. Each class carries its JSON-RPC code and HTTP status;
 * `message` (and `wireFields`) are short and safe to show a client (no key, no secret, no upstream
 * URL); `logDetails` and `cause` are for logs only. docs/errors.md lists them all and a test keeps
 * the two equal.
 */
export type ErrorOptions = { logDetails?: string; cause?: unknown; wireFields?: Record<string, unknown> }

export class TollgateError extends Error {
  readonly code: number
  readonly httpStatus: number
  readonly logDetails: string | undefined
  /** Extra members of the wire error object beside code and message (the 402/429 `event`, `details`). */
  readonly wireFields: Record<string, unknown> | undefined

  constructor(code: number, httpStatus: number, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.httpStatus = httpStatus
    this.logDetails = options.logDetails
    this.wireFields = options.wireFields
  }
}

/** The one JSON-RPC code used for every 401 (the hosted service sends none; -32001 is free in EIP-1474). */
export const unauthorizedCode = -32001

export class MissingKeyError extends TollgateError {
  override name = 'MissingKeyError'
  constructor() {
    super(unauthorizedCode, 401, 'project id required in the url')
  }
}

export class InvalidKeyError extends TollgateError {
  override name = 'InvalidKeyError'
  constructor() {
    super(unauthorizedCode, 401, 'invalid project id')
  }
}

export class InvalidSecretError extends TollgateError {
  override name = 'InvalidSecretError'
  constructor() {
    super(unauthorizedCode, 401, 'invalid project id or project secret')
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

export class DailyLimitError extends TollgateError {
  override name = 'DailyLimitError'
  constructor() {
    super(402, 402, 'Payment Required', {
      wireFields: {
        event: -33000,
        details: 'You have reached your daily credit limit. The balance resets at 00:00 UTC.',
      },
    })
  }
}

/** The three 429s of COMPAT.md §1, told apart by their event code. */
export const rateLimitEvents = {
  planCreditsPerSecond: {
    event: -33200,
    details:
      "You have exceeded your plan's credits per second throughput limit. Slow down or upgrade your plan.",
  },
  keyCreditsPerSecond: {
    event: -33300,
    details: "You have exceeded this key's own credits per second throughput limit.",
  },
  keyCreditsPerDay: {
    event: -33400,
    details: "You have reached this key's own daily credit limit. It resets at 00:00 UTC.",
  },
} as const

export class RateLimitError extends TollgateError {
  override name = 'RateLimitError'
  constructor(kind: keyof typeof rateLimitEvents) {
    super(429, 429, 'Too Many Requests', { wireFields: { ...rateLimitEvents[kind] } })
  }
}

export class ParseError extends TollgateError {
  override name = 'ParseError'
  constructor(options?: ErrorOptions) {
    super(-32700, 200, 'parse error', options)
  }
}

export class InvalidRequestError extends TollgateError {
  override name = 'InvalidRequestError'
  constructor(message = 'invalid request', options?: ErrorOptions) {
    super(-32600, 200, message, options)
  }
}

export class MethodNotFoundError extends TollgateError {
  override name = 'MethodNotFoundError'
  constructor(method: string) {
    super(-32601, 200, `the method ${method} does not exist/is not available`)
  }
}

export class NotificationsNotSupportedError extends TollgateError {
  override name = 'NotificationsNotSupportedError'
  constructor() {
    super(-32601, 200, 'notifications not supported')
  }
}

export class SubscriptionLimitError extends TollgateError {
  override name = 'SubscriptionLimitError'
  constructor(limit: number) {
    super(-32005, 200, `subscription limit reached: at most ${limit} per connection`)
  }
}

export class InvalidParamsError extends TollgateError {
  override name = 'InvalidParamsError'
  constructor(message: string) {
    super(-32602, 200, message)
  }
}

export class BodyTooLargeError extends TollgateError {
  override name = 'BodyTooLargeError'
  constructor(limitBytes: number) {
    super(-32600, 413, `request body too large, the limit is ${limitBytes} bytes`)
  }
}

export class UnsupportedContentTypeError extends TollgateError {
  override name = 'UnsupportedContentTypeError'
  constructor() {
    super(-32600, 415, 'invalid content type, only application/json is supported')
  }
}

export class RouteNotFoundError extends TollgateError {
  override name = 'RouteNotFoundError'
  constructor() {
    super(-32600, 404, 'not found')
  }
}

export class HttpMethodNotAllowedError extends TollgateError {
  override name = 'HttpMethodNotAllowedError'
  constructor(allowed: 'POST' | 'GET' = 'POST') {
    super(
      -32600,
      405,
      allowed === 'POST' ? 'method not allowed, send JSON-RPC with POST' : 'method not allowed, use GET',
    )
  }
}

export class UpgradeRequiredError extends TollgateError {
  override name = 'UpgradeRequiredError'
  constructor() {
    super(-32600, 426, 'this path is for WebSocket connections')
  }
}

export class UnknownNetworkError extends TollgateError {
  override name = 'UnknownNetworkError'
  constructor() {
    super(-32600, 404, 'unknown network')
  }
}

export class UpstreamUnavailableError extends TollgateError {
  override name = 'UpstreamUnavailableError'
  constructor(options?: ErrorOptions) {
    super(-32603, 503, 'no upstream available, try again later', options)
  }
}

export class UpstreamTimeoutError extends TollgateError {
  override name = 'UpstreamTimeoutError'
  constructor(options?: ErrorOptions) {
    super(-32603, 504, 'upstream request timed out', options)
  }
}

export class InternalError extends TollgateError {
  override name = 'InternalError'
  constructor(options?: ErrorOptions) {
    super(-32603, 500, 'internal error', options)
  }
}
