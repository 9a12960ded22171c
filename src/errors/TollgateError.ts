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
