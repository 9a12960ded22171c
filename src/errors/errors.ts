/**
 * Every error the gateway answers with. Each class carries its JSON-RPC code and HTTP status;
 * `message` (and `wireFields`) are short and safe to show a client (no key, no secret, no upstream
 * URL); `logDetails` and `cause` are for logs only. docs/errors.md lists them all and a test keeps
 * the two equal.
 */
export type ErrorOptions = {
  logDetails?: string
  cause?: unknown
  wireFields?: Record<string, unknown>
  retryAfterSeconds?: number
  /** The HTTP `WWW-Authenticate` challenge of a 401 that asks for a bearer token. */
  wwwAuthenticate?: string
}

export class TollgateError extends Error {
  readonly code: number
  readonly httpStatus: number
  readonly logDetails: string | undefined
  /** Extra members of the wire error object beside code and message (the 402/429 `event`, `details`). */
  readonly wireFields: Record<string, unknown> | undefined
  /** When the same request would be admitted again: the HTTP `Retry-After` of a 402 or 429. */
  readonly retryAfterSeconds: number | undefined
  readonly wwwAuthenticate: string | undefined

  constructor(code: number, httpStatus: number, message: string, options: ErrorOptions = {}) {
    // a refusal is an answer, not a fault: nobody reads its stack, and capturing one is most of what
    // the error costs (a flood of wrong secrets or rate-limited calls makes thousands a second)
    const stackTraceLimit = Error.stackTraceLimit
    if (httpStatus < 500) Error.stackTraceLimit = 0
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    Error.stackTraceLimit = stackTraceLimit
    this.code = code
    this.httpStatus = httpStatus
    this.logDetails = options.logDetails
    this.wireFields = options.wireFields
    this.retryAfterSeconds = options.retryAfterSeconds
    this.wwwAuthenticate = options.wwwAuthenticate
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

/** `Retry-After` is whole seconds, at least 1 (0 would invite an immediate retry that fails again). */
function toRetryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000))
}

export class DailyLimitError extends TollgateError {
  override name = 'DailyLimitError'
  /** `msToReset`: until 00:00 UTC, when the balance is whole again. */
  constructor(msToReset: number) {
    super(402, 402, 'Payment Required', {
      retryAfterSeconds: toRetryAfterSeconds(msToReset),
      wireFields: {
        event: -33000,
        details: 'You have reached your daily credit limit. The balance resets at 00:00 UTC.',
      },
    })
  }
}

/** The three 429s of docs/compatibility.md §1, told apart by their event code. */
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
  /** `retryAfterMs`: until the call would be admitted (the bucket refilled, or the day over). */
  constructor(kind: keyof typeof rateLimitEvents, retryAfterMs: number) {
    super(429, 429, 'Too Many Requests', {
      wireFields: { ...rateLimitEvents[kind] },
      retryAfterSeconds: toRetryAfterSeconds(retryAfterMs),
    })
  }
}

/** Too many wrong secrets or JWTs from the client's address, or at a key under attack; nothing was checked. */
export class AuthRateLimitError extends TollgateError {
  override name = 'AuthRateLimitError'
  /** `retryAfterMs`: until the client may present a credential again. */
  constructor(retryAfterMs: number) {
    super(429, 429, 'Too Many Requests', {
      wireFields: { details: 'too many failed authentications; try again later' },
      retryAfterSeconds: toRetryAfterSeconds(retryAfterMs),
    })
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

/** A WebSocket message beyond `websocket.maxInFlightRequests` unanswered ones: refused, never queued. */
export class InFlightLimitError extends TollgateError {
  override name = 'InFlightLimitError'
  constructor(limit: number) {
    super(-32005, 200, `too many requests in flight on this connection: at most ${limit}`)
  }
}

/**
 * A request's answers passed `server.maxAnswerBytes` (a batch's answers add up): the call whose
 * answer crossed it, and those after it, get this instead (geth's `response too large`).
 */
export class ResponseTooLargeError extends TollgateError {
  override name = 'ResponseTooLargeError'
  constructor(maxBytes: number) {
    super(-32003, 200, `response too large: a request's answers may hold at most ${maxBytes} bytes`)
  }
}

/**
 * The process holds as many large answers (`server.maxAnswerBytesInFlight`) or request bodies
 * (`server.maxBodyBytesInFlight`) as it may: this one waits for others to be sent or read.
 */
export class ServerBusyError extends TollgateError {
  override name = 'ServerBusyError'
  constructor(options?: ErrorOptions) {
    super(-32005, 503, 'server busy, try again later', { ...options, retryAfterSeconds: 1 })
  }
}

export class InvalidParamsError extends TollgateError {
  override name = 'InvalidParamsError'
  constructor(message: string) {
    super(-32602, 200, message)
  }
}

/**
 * A parameter past one of its limits (docs/compatibility.md §7, "Parameter limits"), refused before
 * any node is asked: `why` names the limit. Kept whole where a field's other faults read `invalid field`.
 */
export class ParamLimitError extends InvalidParamsError {
  override name = 'ParamLimitError'
  constructor(index: number, why: string) {
    super(`invalid argument ${index}: ${why}`)
  }
}

/**
 * An eth_getLogs answer with more logs than the network allows (docs/compatibility.md §7), worded as
 * the hosted service words it, with the range up to the block where the limit was passed.
 */
export class LogResultsLimitError extends TollgateError {
  override name = 'LogResultsLimitError'
  constructor(limit: number, suggestedRange?: readonly [bigint, bigint]) {
    const range = suggestedRange?.map((block) => `0x${block.toString(16)}`).join(', ')
    super(
      -32005,
      200,
      `query returned more than ${limit} results${range ? `. Try with this block range [${range}].` : ''}`,
    )
  }
}

/**
 * A filter id this key did not make (another key's, or none at all), answered as geth answers an
 * unknown filter, never forwarded (docs/compatibility.md §4).
 */
export class FilterNotFoundError extends TollgateError {
  override name = 'FilterNotFoundError'
  constructor() {
    super(-32000, 200, 'filter not found')
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

/**
 * An upstream's answer tollgate must read to answer the call and cannot: a chunk of a split
 * eth_getLogs whose answer is not JSON, or whose result is not a list of logs.
 */
export class MalformedUpstreamAnswerError extends TollgateError {
  override name = 'MalformedUpstreamAnswerError'
  constructor(options?: ErrorOptions) {
    super(-32603, 502, 'an upstream answer that cannot be read', options)
  }
}

/** The shared credit balance (Redis) cannot be reached and `metering.onRedisDown` is `closed`. */
export class BalanceUnavailableError extends TollgateError {
  override name = 'BalanceUnavailableError'
  constructor(options?: ErrorOptions) {
    super(-32603, 503, 'credit balance unavailable, try again later', options)
  }
}

export class InternalError extends TollgateError {
  override name = 'InternalError'
  constructor(options?: ErrorOptions) {
    super(-32603, 500, 'internal error', options)
  }
}

// The Gas REST API (docs/compatibility.md §5): answered as `{"statusCode", "message"}`.

export class UnknownGasEndpointError extends TollgateError {
  override name = 'UnknownGasEndpointError'
  constructor(endpoint: string) {
    super(-32600, 404, `unknown endpoint '${endpoint}'`)
  }
}

export class UnsupportedChainIdError extends TollgateError {
  override name = 'UnsupportedChainIdError'
  constructor(chainId: string) {
    super(-32600, 400, `'${chainId}' is not a supported chain id.`)
  }
}

export class NoBaseFeeError extends TollgateError {
  override name = 'NoBaseFeeError'
  constructor(chainId: number) {
    super(-32600, 400, `chain ${chainId} has no base fees (pre-London): the gas API needs EIP-1559 blocks.`)
  }
}

export class FeeHistoryLoadingError extends TollgateError {
  override name = 'FeeHistoryLoadingError'
  constructor(chainId: number) {
    super(-32603, 503, `the fee history of chain ${chainId} is still loading; try again shortly`)
  }
}

// The admin API and the CLI: answered as `{"error": {"message"}}`; the CLI prints the message.

export class AdminTokenRequiredError extends TollgateError {
  override name = 'AdminTokenRequiredError'
  constructor() {
    super(unauthorizedCode, 401, 'admin token required: Authorization: Bearer <token>')
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

// /metrics: answered as JSON-RPC errors, like its 404 and 405.

export class MetricsTokenRequiredError extends TollgateError {
  override name = 'MetricsTokenRequiredError'
  constructor() {
    super(unauthorizedCode, 401, 'metrics token required: Authorization: Bearer <token>', {
      wwwAuthenticate: 'Bearer realm="metrics"',
    })
  }
}

// WebSocket: what ends an open connection, sent as a close frame (toCloseFrame), never as an answer.

/** The connection's key was revoked (or can no longer be used: its account's plan has no numbers). */
export class KeyRevokedError extends TollgateError {
  override name = 'KeyRevokedError'
  constructor() {
    super(unauthorizedCode, 401, 'key revoked')
  }
}

/** The JWT the connection was opened with expired (its `exp` passed): the client opens a new one with a new token. */
export class JwtExpiredError extends TollgateError {
  override name = 'JwtExpiredError'
  constructor() {
    super(unauthorizedCode, 401, 'JWT expired')
  }
}

/** A subscription's notification the daily balance cannot pay for. */
export class NotificationUnpaidError extends TollgateError {
  override name = 'NotificationUnpaidError'
  constructor() {
    super(-32005, 402, 'daily credit limit reached; the balance resets at 00:00 UTC')
  }
}

/** More than `websocket.maxBufferedBytes` waiting for a client that reads too slowly. */
export class SlowReaderError extends TollgateError {
  override name = 'SlowReaderError'
  constructor() {
    super(-32005, 429, 'send buffer full: the client reads too slowly')
  }
}

/** The gateway is stopping: its open connections are closed with 1001 (going away). */
export class ShuttingDownError extends TollgateError {
  override name = 'ShuttingDownError'
  constructor() {
    super(-32603, 503, 'server shutting down')
  }
}
