import { type ErrorOptions, TollgateError } from './TollgateError.ts'

// JSON-RPC: the envelope, the method and its params (EIP-1474 codes).

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
 * A filter id this key did not make (another key's, or none at all), answered as geth answers an
 * unknown filter, never forwarded (docs/compatibility.md §4).
 */
export class FilterNotFoundError extends TollgateError {
  override name = 'FilterNotFoundError'
  constructor() {
    super(-32000, 200, 'filter not found')
  }
}

export class InternalError extends TollgateError {
  override name = 'InternalError'
  constructor(options?: ErrorOptions) {
    super(-32603, 500, 'internal error', options)
  }
}
