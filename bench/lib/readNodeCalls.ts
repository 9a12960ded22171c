import { setTimeout as sleep } from 'node:timers/promises'
import type { NodeCalls } from './summarizeRun.ts'

/** The counting proxy's counts so far. */
export async function readNodeCalls(proxyUrl: string): Promise<NodeCalls> {
  return (await (await fetch(proxyUrl)).json()) as NodeCalls
}

/** The calls counted from `before` to `after`, divided by `per` (1: the calls themselves). */
export function nodeCallsBetween(before: NodeCalls, after: NodeCalls, per = 1): NodeCalls {
  const byMethod: Record<string, number> = {}
  for (const [method, count] of Object.entries(after.byMethod)) {
    const calls = count - (before.byMethod[method] ?? 0)
    if (calls > 0) byMethod[method] = calls / per
  }
  return { total: (after.total - before.total) / per, byMethod }
}

/** Node calls per second over `seconds` (no client calling: a configuration's own). */
export async function countNodeCallsPerSecond(proxyUrl: string, seconds: number): Promise<NodeCalls> {
  const before = await readNodeCalls(proxyUrl)
  const startedMs = Date.now()
  await sleep(seconds * 1_000)
  const after = await readNodeCalls(proxyUrl)
  return nodeCallsBetween(before, after, (Date.now() - startedMs) / 1_000)
}
