import type { UpstreamMember } from '../upstreams/createUpstreamPool.ts'

export type Head = { number: bigint; gasLimit: bigint }

export type HeadTracker = {
  /** The highest head seen across upstreams, or undefined before the first successful poll. */
  latest(): Head | undefined
  /** Polls every upstream now; resolves when done (failures mark the member unhealthy). */
  poll(): Promise<void>
  close(): void
}

export type HeadTrackerOptions = { pollMs: number; timeoutMs: number; onError?: (err: unknown) => void }

const latestBlockBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'eth_getBlockByNumber',
  params: ['latest', false],
})

/**
 * Follows each upstream's head in the background: health for the pool, and the latest block's gas
 * limit for the eth_call / eth_estimateGas gas cap. Requests only read what it found.
 */
export function createHeadTracker(
  members: readonly UpstreamMember[],
  options: HeadTrackerOptions,
): HeadTracker {
  let latest: Head | undefined
  let polling: Promise<void> | undefined

  async function pollMember(member: UpstreamMember): Promise<void> {
    try {
      const response = await member.upstream.post(latestBlockBody, { timeoutMs: options.timeoutMs })
      if (response.status < 200 || response.status >= 300) throw new Error(`HTTP ${response.status}`)
      const block = (
        JSON.parse(response.body.toString()) as {
          result?: { number: string; gasLimit: string }
        }
      ).result
      if (!block) throw new Error('no latest block in the answer')
      const head = { number: BigInt(block.number), gasLimit: BigInt(block.gasLimit) }
      member.healthy = true
      member.lastError = undefined
      if (latest === undefined || head.number >= latest.number) latest = head
    } catch (err) {
      member.healthy = false
      member.lastError = (err as Error).message
    }
  }

  function poll(): Promise<void> {
    polling ??= Promise.all(members.map(pollMember))
      .then(() => undefined)
      .finally(() => {
        polling = undefined
      })
    return polling
  }

  const timer = setInterval(() => poll().catch((err) => options.onError?.(err)), options.pollMs)
  timer.unref()

  return { latest: () => latest, poll, close: () => clearInterval(timer) }
}
