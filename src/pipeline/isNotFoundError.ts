/**
 * Whether a node's error answer means "no such block/transaction/uncle": some nodes answer -32001
 * (anvil's "Resource not found") or a "not found" message where others answer null.
 */
export function isNotFoundError(error: { code?: unknown; message?: unknown }): boolean {
  if (error.code === -32001) return true
  return typeof error.message === 'string' && /not found|unknown block|no such block/i.test(error.message)
}
