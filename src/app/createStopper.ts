import process from 'node:process'
import type { Logger } from 'pino'

/** What a stop signal stops: `stop` drains, `kill` is for a second signal. */
export type Stoppable = { stop(): Promise<void>; kill(): void }

/**
 * The signals' one policy, from the first moment of start-up: the first drains and stops (during
 * start-up, as soon as the gateway has started), a second exits at once. Exiting rather than dying
 * by the signal lets an embedded devnet still starting be stopped too (startAnvil.ts).
 */
export function createStopper(log: Logger, drainMessage: string) {
  let running: Stoppable | undefined
  let stopping = false
  const close = (target: Stoppable, signal: string) => {
    log.info({ signal }, drainMessage)
    target.stop().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  return {
    stop(signal: string): void {
      if (stopping) {
        log.warn('second signal: exiting now')
        running?.kill()
        process.exit(1)
      }
      stopping = true
      if (running) close(running, signal)
      else log.info({ signal }, 'stopping once started')
    },
    stopping: () => stopping,
    /** The gateway is up: false when a signal came first (it is being stopped now). */
    started(target: Stoppable): boolean {
      running = target
      if (stopping) close(target, 'a signal during start-up')
      return !stopping
    },
  }
}
