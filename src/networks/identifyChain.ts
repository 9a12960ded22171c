import type { Logger } from 'pino'
import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import { callUpstream } from '../upstreams/callUpstream.ts'
import type { Network } from './createNetwork.ts'

export type IdentifyChainOptions = {
  /** How long to wait before asking again when no upstream answered. */
  retryMs: number
  /** The longest `ready` waits for the first answer (a hung upstream must not hold the start up). */
  waitMs: number
  log?: Logger
  timers?: Timers
}

/**
 * Tells a network's cache the chain's identity, its genesis block's hash, asked of the upstreams at
 * start (and again every `retryMs` until one answers): the shared cache keeps and reads a chain's
 * answers only once it is known. `ready` settles after the first answer (and the shared epoch read),
 * the first failure, or `waitMs`; `stop` ends the retries.
 */
export function identifyChain(
  network: Network,
  options: IdentifyChainOptions,
): { ready: Promise<void>; stop(): void } {
  const timers = options.timers ?? systemTimers
  let stopped = false
  let timer: unknown
  let warned = false
  async function attempt(): Promise<void> {
    const { cache } = network
    if (stopped || !cache) return
    const genesis = await callUpstream<{ hash?: unknown } | null>(network.pool, 'eth_getBlockByNumber', [
      '0x0',
      false,
    ]).catch((err: unknown) => err)
    if (stopped) return
    const hash =
      typeof genesis === 'object' && genesis !== null ? (genesis as { hash?: unknown }).hash : undefined
    if (typeof hash === 'string' && /^0x[0-9a-fA-F]{64}$/.test(hash)) {
      await cache.identify(hash)
      return
    }
    if (!warned) {
      warned = true
      options.log?.warn(
        { network: network.name, err: genesis instanceof Error ? genesis.message : undefined },
        "the chain's genesis block is not known yet: its answers are not shared until it is",
      )
    }
    timer = timers.setTimeout(() => void attempt(), options.retryMs)
  }
  let waiting: unknown
  const ready = Promise.race([
    attempt(),
    new Promise<void>((resolve) => {
      waiting = timers.setTimeout(resolve, options.waitMs)
    }),
  ]).finally(() => timers.clearTimeout(waiting))
  return {
    ready,
    stop() {
      stopped = true
      if (timer !== undefined) timers.clearTimeout(timer)
    },
  }
}
