import type { Logger } from 'pino'
import { ClientGoneError } from '../errors/callEndings.ts'
import { TollgateError } from '../errors/TollgateError.ts'
import { toHeaderList } from '../errors/toHeaderList.ts'
import { toWireError } from '../errors/toWireError.ts'
import type { RpcId, RpcPayload } from '../jsonrpc/types.ts'

export type ErrorAnswer = {
  payload: RpcPayload
  httpStatus: number
  /** The error's own headers (a 402's or 429's Retry-After), as names and values one after the other. */
  headers: string[]
}

/**
 * What a call or request is answered with for `err` (toWireError, the one mapping to wire errors),
 * with `id`. A failure that is ours or an upstream's (5xx) is logged; a client that went away is not
 * a failure.
 */
export function errorAnswer(log: Logger, id: RpcId, err: unknown): ErrorAnswer {
  const { httpStatus, body, error, headers } = toWireError(err, 'jsonrpc', id)
  if (httpStatus >= 500 && !(err instanceof ClientGoneError)) {
    const logDetails = err instanceof TollgateError ? err.logDetails : undefined
    log.warn(
      { err: err instanceof TollgateError ? undefined : err, logDetails, status: httpStatus },
      error.message,
    )
  }
  return { payload: JSON.stringify(body), httpStatus, headers: toHeaderList(headers) }
}
