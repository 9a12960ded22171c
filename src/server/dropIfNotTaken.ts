import type { ServerResponse } from 'node:http'

/**
 * A deadline for a large answer to be taken: one that has not gone out by then is dropped with its
 * connection (a client that reads a little now and then would keep an idle timeout waiting for ever).
 */
export function dropIfNotTaken(res: ServerResponse, timeoutMs: number): void {
  const timer = setTimeout(() => res.destroy(), timeoutMs)
  res.once('close', () => clearTimeout(timer))
}
