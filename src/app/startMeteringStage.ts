import type { Logger } from 'pino'
import { createDashboardStats, type DashboardStats, withUsageTap } from '../admin/createDashboardStats.ts'
import { createSharedDashboardFigures } from '../admin/createSharedDashboardFigures.ts'
import type { AlertWatcher } from '../alerts/createAlertWatcher.ts'
import type { Config } from '../config/configSchema.ts'
import type { Clock } from '../metering/clock.ts'
import { createMeter } from '../metering/createMeter.ts'
import { createRedisBank } from '../metering/createRedisBank.ts'
import { createUsageSpool } from '../metering/createUsageSpool.ts'
import { createUsageTotals, type UsageTotals } from '../metering/createUsageTotals.ts'
import { getSpoolDir } from '../metering/getSpoolDir.ts'
import type { Meter } from '../metering/meterTypes.ts'
import { replayUsageSpool } from '../metering/replayUsageSpool.ts'
import { composeStages } from './composeStages.ts'
import type { Stores } from './stores.ts'
import type { WorkerRole } from './workerRole.ts'

/** The meter, and what counts the usage it writes. */
export type MeteringStage = {
  meter: Meter
  /** The usage the meter wrote, by network, for /metrics. */
  usageTotals: UsageTotals
  /** The dashboard's figures (fed only when the dashboard is on); with Redis, every instance's. */
  dashboardStats: DashboardStats
  /** Whether the credit bank's Redis connection is up; undefined without Redis. */
  redisUp: (() => boolean) | undefined
  /**
   * The meter's last flush (and its leases given back), then the bank closed, then the dashboard's
   * figures sent (the last flush's usage with them).
   */
  close(): Promise<void>
}

export type MeteringStageDeps = {
  stores: Stores
  clock: Clock
  log: Logger
  /** Set in a worker of `--workers N`: the primary's bank (without Redis), and no spool replay here. */
  worker: WorkerRole | undefined
  /** Usage alerts: told of each write of usage and each refusal. */
  alerts?: Pick<AlertWatcher, 'usageWritten' | 'refused'> | undefined
}

/**
 * The credit ledger: the usage spooled at earlier stops added to the database first (the primary
 * does it before forking workers), then the meter reads today's balances. With Redis, the balances
 * and rate limits are shared by every instance (leases); without it, a worker's are shared with the
 * other workers through the primary's bank.
 */
export async function startMeteringStage(config: Config, deps: MeteringStageDeps): Promise<MeteringStage> {
  const { stores, clock, log, worker, alerts } = deps
  const { redis } = config
  const dashboardOn = config.admin.token !== undefined
  return composeStages(log, async (stages) => {
    // with Redis, the overview's figures are every instance's: counted into and read from Redis
    const dashboardStats = await stages.start(async () =>
      createDashboardStats({
        now: () => clock.now(),
        shared:
          dashboardOn && redis
            ? {
                figures: await createSharedDashboardFigures({
                  url: redis.url,
                  keyPrefix: redis.keyPrefix,
                  onError: (err) => log.warn({ err }, 'redis connection error (dashboard figures)'),
                }),
                flushMs: config.metering.flushMs,
                onError: (err) =>
                  log.warn({ err }, 'sending the dashboard figures to Redis failed; retrying'),
              }
            : undefined,
      }),
    )
    const redisBank = redis
      ? await stages.start(() =>
          createRedisBank({
            url: redis.url,
            keyPrefix: redis.keyPrefix,
            commandTimeoutMs: config.metering.redisTimeoutMs,
            onError: (err) => log.warn({ err }, 'redis connection error'),
          }),
        )
      : undefined
    const primaryBank = worker?.bank
    const bank = redisBank ?? (primaryBank && (await stages.start(() => primaryBank)))
    const spool = createUsageSpool({
      dir: getSpoolDir(config),
      ledgerId: await stores.usage.getLedgerId(),
      onWrite: ({ file, calls, credits, cause }) =>
        log.warn(
          { err: cause, file, calls, credits },
          'the database did not take the last usage: kept in a spool file, added at the next start',
        ),
    })
    if (!worker) await replayUsageSpool(spool, stores.usage, log)
    // the dashboard's live figures and /metrics' totals count the usage the meter writes
    const usageTotals = createUsageTotals()
    const meter = await stages.start(() =>
      createMeter({
        store: withUsageTap(stores.usage, (delta) => {
          usageTotals.record(delta)
          if (dashboardOn) dashboardStats.recordUsage(delta)
          alerts?.usageWritten(delta.daily)
        }),
        onRefused: alerts?.refused,
        clock,
        flushMs: config.metering.flushMs,
        spool,
        bank,
        onBankDown: config.metering.onRedisDown,
        onError: (err) => log.error({ err }, 'usage flush or credit report failed; retrying with the next'),
      }),
    )
    return { meter, usageTotals, dashboardStats, redisUp: redisBank && (() => redisBank.isConnected()) }
  })
}
