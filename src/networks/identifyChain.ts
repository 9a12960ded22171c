import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import type { Network } from './createNetwork.ts'

export type IdentifyChainOptions = {
  /** How often to look again while the head tracker does not know the genesis block yet. */
  retryMs: number
  /** The longest `ready` waits for the shared cache to read the chain's epoch. */
  waitMs: number
  timers?: Timers
}

/**
 * Tells a network's cache the chain's identity, its genesis block's hash, as soon as the head
 * tracker knows it (it asks at start, with its first poll): the shared cache keeps and reads a
 * chain's answers only once it is known. A new chain later comes as the tracker's `newChain` event
 * (createNetwork). `ready` settles once the cache took a known genesis (the shared epoch read), or
 * at once when none is known yet, or after `waitMs`; `stop` ends the looking.
 */
export function identifyChain(
  network: Network,
  options: IdentifyChainOptions,
): { ready: Promise<void>; stop(): void } {
  const timers = options.timers ?? systemTimers
  let stopped = false
  let timer: unknown
  function attempt(): Promise<void> {
    const { cache } = network
    if (stopped || !cache) return Promise.resolve()
    const genesis = network.heads.genesis()
    if (genesis !== undefined) return cache.identify(genesis)
    timer = timers.setTimeout(() => void attempt(), options.retryMs)
    return Promise.resolve()
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
