import { InternalError, TollgateError } from './errors.ts'

export type WireError = { code: number; message: string; [field: string]: unknown }
export type JsonRpcErrorResult = { httpStatus: number; error: WireError }

/** The one place where any thrown value becomes a wire error and an HTTP status. */
export function toJsonRpcError(err: unknown): JsonRpcErrorResult {
  const known = err instanceof TollgateError ? err : new InternalError({ cause: err })
  const error: WireError = { code: known.code, message: known.message, ...known.wireFields }
  return { httpStatus: known.httpStatus, error }
}
