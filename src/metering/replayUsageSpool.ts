import type { Logger } from 'pino'
import type { UsageSpool } from './createUsageSpool.ts'
import type { UsageStore } from './usageStore.ts'

/**
 * Adds what earlier stops spooled to the ledger, before the meter reads today's balances (so they
 * count it). A spool that cannot be replayed now stays for the next start; the start goes on.
 */
export async function replayUsageSpool(spool: UsageSpool, store: UsageStore, log: Logger): Promise<void> {
  try {
    const replay = await spool.replay(store)
    if (replay.added + replay.skipped === 0) return
    log.info(
      { dir: spool.dir, ...replay },
      'usage spooled at an earlier stop is in the ledger now (batches found there already were not added again)',
    )
  } catch (err) {
    log.warn(
      { err, dir: spool.dir },
      'usage spooled at an earlier stop could not be added yet; kept for the next start',
    )
  }
}
