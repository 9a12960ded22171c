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

/**
 * No answer within the call's deadline. `nodeWorked`: a node had the call until its time there ran
 * out while it answered other requests: the call is slow by its nature, and its key pays for it
 * (priceOf); otherwise the gateway or the node is at fault, and it is free.
 */
export class UpstreamTimeoutError extends TollgateError {
  override name = 'UpstreamTimeoutError'
  constructor(
    options?: ErrorOptions,
    readonly nodeWorked = false,
  ) {
    const message = nodeWorked
      ? 'upstream request timed out: the node was still working on the call'
      : 'upstream request timed out'
    super(-32603, 504, message, options)
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

/**
 * EIP-7966's timeout answer (code 4, the transaction's hash as `data`), given for the node: an
 * eth_sendRawTransactionSync that tollgate resent after a failure a node may have seen, to a node
 * that already has the transaction in its pool and no receipt for it yet (docs/compatibility.md §7).
 */
export class ReceiptNotReadyError extends TollgateError {
  override name = 'ReceiptNotReadyError'
  constructor(transactionHash: string) {
    super(4, 200, "the transaction was added to the transaction pool but wasn't processed yet", {
      wireFields: { data: transactionHash },
    })
  }
}
