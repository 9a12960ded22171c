/**
 * Every error the gateway answers with. Each class carries its JSON-RPC code and HTTP status;
 * `message` is short and safe to show a client (no key, no secret, no upstream URL), `details`
 * and `cause` are for logs only. docs/errors.md lists them all and a test keeps the two equal.
 */
export type ErrorOptions = { details?: string; cause?: unknown; data?: unknown }

export class TollgateError extends Error {
  readonly code: number
  readonly httpStatus: number
  readonly details: string | undefined
  readonly data: unknown

  constructor(code: number, httpStatus: number, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.httpStatus = httpStatus
    this.details = options.details
    this.data = options.data
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
  constructor() {
    super(-32600, 405, 'method not allowed, send JSON-RPC with POST')
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
