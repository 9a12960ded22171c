import { type ErrorOptions, TollgateError } from './TollgateError.ts'

// Upstreams: the nodes behind the gateway, unknown, unreachable or answering nonsense.

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
