import { TollgateError } from './TollgateError.ts'

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
