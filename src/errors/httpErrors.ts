import { TollgateError, unauthorizedCode } from './TollgateError.ts'

// HTTP: routes, methods, content types and body sizes, before any JSON-RPC is read.

export class BodyTooLargeError extends TollgateError {
  override name = 'BodyTooLargeError'
  constructor(limitBytes: number) {
    super(-32600, 413, `request body too large, the limit is ${limitBytes} bytes`)
  }
}

/**
 * A body holding part of the process's bound on bodies in flight that stopped arriving, or trickles
 * (`server.bodyStallTimeoutMs`): refused, so that what it held goes back to the others.
 */
export class BodyStalledError extends TollgateError {
  override name = 'BodyStalledError'
  constructor(minBytes: number, timeoutMs: number) {
    super(-32600, 408, `request body too slow: less than ${minBytes} bytes in ${timeoutMs} ms`)
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

// /metrics: answered as JSON-RPC errors, like its 404 and 405.

export class MetricsTokenRequiredError extends TollgateError {
  override name = 'MetricsTokenRequiredError'
  constructor() {
    super(unauthorizedCode, 401, 'metrics token required: Authorization: Bearer <token>', {
      wwwAuthenticate: 'Bearer realm="metrics"',
    })
  }
}
