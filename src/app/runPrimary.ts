import cluster, { type Worker } from 'node:cluster'
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { ApiKey } from '../auth/apiKey.ts'
import { createKeyAdmin } from '../auth/keyAdmin.ts'
import type { Config } from '../config/configSchema.ts'
import { planReload } from '../config/planReload.ts'
import type { DevnetFixtures } from '../devnet/seedDevnet.ts'
import type { Anvil } from '../devnet/startAnvil.ts'
import { type DevnetEndpoint, startDevnet } from '../devnet/startDevnet.ts'
import { createMemoryBank, type MemoryBank } from '../metering/createMemoryBank.ts'
import { createUsageSpool } from '../metering/createUsageSpool.ts'
import { getSpoolDir } from '../metering/getSpoolDir.ts'
import { replayUsageSpool } from '../metering/replayUsageSpool.ts'
import { serveClusterBank } from '../metering/serveClusterBank.ts'
import { assertPortFree } from '../server/assertPortFree.ts'
import { type DatabaseLock, lockDatabaseFile } from '../store/lockDatabaseFile.ts'
import { createStores } from './createStores.ts'
import {
  type ListeningMessage,
  type ReloadMessage,
  type SpecMessage,
  type SpecRequest,
  type WorkerSpec,
  workerMarker,
} from './workerRole.ts'

export type Primary = {
  url: string
  networks: string[]
  devnet: { fixtures: DevnetFixtures | undefined; demoKey: ApiKey; node: DevnetEndpoint } | undefined
  /** Stops the workers (they drain), then the devnet, and lets go of the database. */
  stop(): Promise<void>
  /** Kills everything now (a second signal). */
  kill(): void
  /**
   * A new, valid config (SIGHUP): restart-only keys are kept at their running value (one log line
   * names them), and each worker is sent the result to apply; a worker forked later starts on it.
   * Throws planReload's ConfigError, telling no worker, when it would move the un-prefixed URLs.
   */
  reload(next: Config): void
  /** The new file was refused whole: the workers count it, and keep their config. */
  refuseReload(): void
}

const restartDelayMs = 1_000

/**
 * The primary process of `tollgate start --workers N`: it checks the port, locks an SQLite file for
 * the whole gateway, migrates, starts and seeds the embedded devnet, holds the credit bank when there
 * is no Redis, and forks the workers that serve the port (node:cluster hands them the connections).
 * It adds the usage spooled at the last stop to the ledger. A worker that dies is forked again in its slot; one that dies before the gateway is up fails the
 * start. Worker slot 0 indexes fee history.
 */
export async function runPrimary(config: Config, log: Logger): Promise<Primary> {
  const count = config.server.workers
  await assertPortFree(config.server.port, config.server.host)
  const lock: DatabaseLock | undefined =
    'sqlite' in config.storage ? lockDatabaseFile(config.storage.sqlite) : undefined
  let anvil: Anvil | undefined
  let bank: MemoryBank | undefined
  const release = async () => {
    bank?.close()
    await anvil?.stop()
    lock?.release()
  }
  try {
    // the schema is brought up to date here, once, before any worker opens the database
    const stores = await createStores(config.storage, {
      exclusive: false,
      onWarning: (message) => log.warn(message),
    })
    let devnet: Primary['devnet']
    let endpoint: DevnetEndpoint | undefined
    try {
      // what the workers spooled at the last stop, added once, before any worker reads a balance
      const spool = createUsageSpool({ dir: getSpoolDir(config), ledgerId: await stores.usage.getLedgerId() })
      await replayUsageSpool(spool, stores.usage, log)
      if (config.devnet) {
        const admin = createKeyAdmin(stores.keys, config.plans)
        const started = await startDevnet(config.devnet, { store: stores.keys, admin })
        anvil = started.anvil
        endpoint = { url: started.anvil.url, wsUrl: started.anvil.wsUrl, chainId: started.anvil.chainId }
        devnet = { fixtures: started.fixtures, demoKey: started.demoKey, node: endpoint }
      }
    } finally {
      await stores.close()
    }
    if (!config.redis) bank = createMemoryBank()

    let running = config
    const spec = (slot: number, bankInstanceId: string | undefined): WorkerSpec => ({
      slot,
      config: running,
      devnet: endpoint,
      bank: bank && bankInstanceId ? { leaseTtlMs: bank.leaseTtlMs, instanceId: bankInstanceId } : undefined,
      bankTimeoutMs: config.metering.redisTimeoutMs,
    })
    const slots = new Map<Worker, number>()
    /** The id each worker has in the bank: never reused, not even by a primary started again the same day (the ledger keeps usage under it). */
    const bankIds = new Map<Worker, string>()
    /** Workers that listen: the ones a reload is sent to (one still starting is told once it listens). */
    const serving = new Set<Worker>()
    /** The config each starting worker was sent. */
    const sent = new Map<Worker, Config>()
    let up = false
    let stopping = false
    let failStart: (err: Error) => void = () => {}
    const started = new Promise<ListeningMessage>((resolve, reject) => {
      failStart = reject
      let listening = 0
      cluster.on('message', (worker, message: SpecRequest | ListeningMessage | undefined) => {
        if (message?.tollgate === 'spec?') {
          const slot = slots.get(worker)
          if (slot === undefined) return
          const part = spec(slot, bankIds.get(worker))
          sent.set(worker, part.config)
          worker.send({ tollgate: 'spec', spec: part } satisfies SpecMessage)
          return
        }
        if (message?.tollgate !== 'listening') return
        // a reload while it started: it runs on the config it was sent, not on the newest
        const config = sent.get(worker) ?? running
        sent.delete(worker)
        serving.add(worker)
        if (config !== running) worker.send({ tollgate: 'reload', config: running } satisfies ReloadMessage)
        listening += 1
        if (listening === count) resolve(message)
      })
    })

    const fork = (slot: number) => {
      // marked as ours (not a secret); its part, secrets included, goes over the IPC channel when
      // it asks (readWorkerSpec)
      const worker = cluster.fork({ [workerMarker]: '1' })
      slots.set(worker, slot)
      // each worker process is its own instance in the bank: a dead one's lease expires there
      if (bank) {
        const bankId = `worker-${worker.id}-${randomUUID()}`
        bankIds.set(worker, bankId)
        const workerBank = bank.forInstance(bankId)
        serveClusterBank(worker, workerBank)
        // no more lease notices to a dead worker
        worker.on('exit', () => void workerBank.close())
      }
      // a worker gone while a reply is on its way: the send's error, not a crash of the primary
      worker.on('error', (err) => log.debug({ err, slot }, 'worker channel error'))
    }
    cluster.on('exit', (worker, code, signal) => {
      const slot = slots.get(worker)
      slots.delete(worker)
      bankIds.delete(worker)
      serving.delete(worker)
      sent.delete(worker)
      if (slot === undefined || stopping) return
      if (!up) {
        failStart(new WorkerStartError(`a worker could not start (exit code ${code ?? signal})`))
        return
      }
      log.error({ slot, pid: worker.process.pid, code, signal }, 'a worker died; forking another')
      setTimeout(() => {
        if (!stopping) fork(slot)
      }, restartDelayMs).unref()
    })
    for (let slot = 0; slot < count; slot++) fork(slot)

    // only to workers that listen: one still starting is told the newest config once it does
    const tell = (message: ReloadMessage) => {
      for (const worker of serving) if (!worker.isDead()) worker.send(message)
    }

    let listening: ListeningMessage
    try {
      listening = await started
    } catch (err) {
      stopping = true
      await stopWorkers(slots, 0)
      throw err
    }
    up = true

    return {
      url: listening.url,
      networks: listening.networks,
      devnet,
      async stop() {
        stopping = true
        await stopWorkers(slots, config.server.shutdownGraceMs + 5_000)
        await release()
      },
      reload(next) {
        const plan = planReload(running, next)
        running = plan.config
        if (plan.refused.length > 0)
          log.warn(
            { keys: plan.refused },
            `config reload: these keys need a restart and keep their running value: ${plan.refused.join(', ')}`,
          )
        tell({ tollgate: 'reload', config: running })
      },
      refuseReload() {
        tell({ tollgate: 'reload', invalid: true })
      },
      kill() {
        stopping = true
        for (const worker of slots.keys()) worker.process.kill('SIGKILL')
        anvil?.process.kill('SIGKILL')
        lock?.release()
      },
    }
  } catch (err) {
    await release()
    throw err
  }
}

/** A worker failed before the gateway was up (its own output says why). */
export class WorkerStartError extends Error {
  override name = 'WorkerStartError'
}

/** SIGTERM to every worker (each drains its requests); SIGKILL to any still running after `graceMs`. */
async function stopWorkers(slots: Map<Worker, number>, graceMs: number): Promise<void> {
  const workers = [...slots.keys()].filter((worker) => !worker.isDead())
  const exits = workers.map(
    (worker) => new Promise<void>((resolve) => worker.process.once('exit', () => resolve())),
  )
  for (const worker of workers) worker.process.kill('SIGTERM')
  const timer = setTimeout(() => {
    for (const worker of workers) if (!worker.isDead()) worker.process.kill('SIGKILL')
  }, graceMs)
  await Promise.all(exits)
  clearTimeout(timer)
}
