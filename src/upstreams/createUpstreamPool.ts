import { UpstreamTimeoutError, UpstreamUnavailableError } from '../errors/errors.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import type { Upstream } from './createUpstream.ts'

export type UpstreamMember = {
  upstream: Upstream
  /** Outcome of the last call or health check: failing members are tried after the healthy ones. */
  healthy: boolean
  lastError: string | undefined
}

export type UpstreamPool = {
  members: readonly UpstreamMember[]
  /**
   * Sends one JSON-RPC body to the best upstream, moving on to the next on a connection error, a
   * non-2xx status or a body that is not JSON. Rejects with UpstreamTimeoutError when the deadline
   * passes, UpstreamUnavailableError when every upstream failed, and ClientGoneError when the client
   * went away (which is not an upstream failure).
   */
  send(body: string, cancellation?: Cancellation): Promise<Buffer>
  isReachable(): boolean
  close(): Promise<void>
}

export type UpstreamPoolOptions = { timeoutMs: number }

export class ClientGoneError extends Error {
  override name = 'ClientGoneError'
  constructor() {
    super('the client went away')
  }
}

export function createUpstreamPool(upstreams: Upstream[], { timeoutMs }: UpstreamPoolOptions): UpstreamPool {
  const members: UpstreamMember[] = upstreams.map((upstream) => ({
    upstream,
    healthy: true,
    lastError: undefined,
  }))

  function ordered(): UpstreamMember[] {
    if (members.every((member) => member.healthy)) return members
    return [...members.filter((member) => member.healthy), ...members.filter((member) => !member.healthy)]
  }

  async function send(body: string, cancellation?: Cancellation): Promise<Buffer> {
    let abortAttempt: ((reason: Error) => void) | undefined
    let stopped: Error | undefined
    const stop = (reason: Error) => {
      stopped ??= reason
      abortAttempt?.(reason)
    }
    const timer = setTimeout(
      () => stop(new UpstreamTimeoutError({ logDetails: `no answer within ${timeoutMs} ms` })),
      timeoutMs,
    )
    const unsubscribe = cancellation?.onCancel(() => stop(new ClientGoneError()))
    const onStart = (abort: (reason: Error) => void) => {
      abortAttempt = abort
      if (stopped) abort(stopped)
    }
    const failures: string[] = []
    try {
      for (const member of ordered()) {
        if (stopped) break
        try {
          const response = await member.upstream.post(body, { onStart })
          if (response.status >= 200 && response.status < 300 && isJsonObjectOrArray(response.body)) {
            member.healthy = true
            member.lastError = undefined
            return response.body
          }
          markFailed(member, `HTTP ${response.status}`)
        } catch (err) {
          if (stopped) break
          markFailed(member, (err as Error).message)
        }
        failures.push(`${member.upstream.label}: ${member.lastError}`)
      }
    } finally {
      clearTimeout(timer)
      unsubscribe?.()
    }
    throw stopped ?? new UpstreamUnavailableError({ logDetails: failures.join('; ') })
  }

  return {
    members,
    send,
    isReachable: () => members.some((member) => member.healthy),
    close: async () => {
      await Promise.all(members.map((member) => member.upstream.close()))
    },
  }
}

function markFailed(member: UpstreamMember, reason: string): void {
  member.healthy = false
  member.lastError = reason
}

/** A cheap check that an answer is JSON at all, without parsing it: the first non-blank byte. */
function isJsonObjectOrArray(body: Buffer): boolean {
  for (const byte of body) {
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue
    return byte === 0x7b || byte === 0x5b
  }
  return false
}
