import cluster from 'node:cluster'
import process from 'node:process'
import type { Config } from '../config/configSchema.ts'
import type { DevnetEndpoint } from '../devnet/startDevnet.ts'
import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import type { BankChannel } from '../metering/createClusterBank.ts'
import type { CreditBank } from '../metering/creditBank.ts'

/**
 * What a worker of `tollgate start --workers N` takes from the primary process, which holds the
 * database lock, runs the embedded devnet and (without Redis) the credit bank for all of them.
 */
export type WorkerRole = {
  /** Set when the config runs the embedded devnet: the primary's anvil, which every worker forwards to. */
  devnet: DevnetEndpoint | undefined
  /** The primary's credit bank (undefined with Redis: the workers use the Redis bank). */
  bank: CreditBank | undefined
  /** This worker indexes fee history (one worker does; the others read what it stores). */
  indexesFees: boolean
}

/** What a forked worker is told: its slot, the devnet, and where its credits come from. */
export type WorkerSpec = {
  slot: number
  devnet: DevnetEndpoint | undefined
  /**
   * When the primary is the bank (no Redis): its lease ttl, and the id it knows this worker by
   * (CreditBank.instanceId, never reused).
   */
  bank: { leaseTtlMs: number; instanceId: string } | undefined
  /** How long a worker waits for the primary's bank to answer an exchange (metering.redisTimeoutMs). */
  bankTimeoutMs: number
  /** The config the primary runs on now: a worker forked after a reload starts on it. */
  config: Config
}

/**
 * A worker's first message: it asks for its part, which the primary sends back over the channel
 * (never in the environment, where secrets would show in /proc and a large config would not fit).
 */
export type SpecRequest = { tollgate: 'spec?' }

/** The primary's answer to a SpecRequest. */
export type SpecMessage = { tollgate: 'spec'; spec: WorkerSpec }

/**
 * The primary's word on a SIGHUP: the config to run on now (restart-only keys already kept at their
 * running value), or that the file was refused whole.
 */
export type ReloadMessage = { tollgate: 'reload'; config: Config } | { tollgate: 'reload'; invalid: true }

/** A worker's message once it listens: what the banner shows. */
export type ListeningMessage = { tollgate: 'listening'; url: string; networks: string[] }

/**
 * The variable the primary of `tollgate start --workers N` sets on the workers it forks (not a
 * secret: it only says "ask me for your part"). A cluster worker without it is another
 * supervisor's (PM2's cluster mode, say), which would never answer: it runs as one plain process.
 */
export const workerMarker = 'TOLLGATE_WORKER'

/** How long a marked worker waits for its part before it gives up (its primary is not answering). */
const specWaitMs = 10_000

/** What readWorkerSpec reads: this process, unless a test gives its own. */
export type WorkerChannel = {
  isWorker: boolean
  env: NodeJS.ProcessEnv
  send: ((message: SpecRequest) => unknown) | undefined
  on(event: 'message', listener: (message: SpecMessage | undefined) => void): unknown
  off(event: 'message', listener: (message: SpecMessage | undefined) => void): unknown
}

const thisProcess = (): WorkerChannel => ({
  isWorker: cluster.isWorker,
  env: process.env,
  send: process.send?.bind(process),
  on: (event, listener) => process.on(event, listener),
  off: (event, listener) => process.off(event, listener),
})

/**
 * In a worker of `tollgate start --workers N` (a cluster worker marked with workerMarker), its
 * part (WorkerSpec), asked of the primary over the IPC channel; its config is the primary's (the
 * file as last reloaded, the command line's options applied): a worker never reads the file
 * itself, which may have changed since (a refused port, an invalid file). Undefined in any other
 * process, another supervisor's cluster worker included. Rejects with NoWorkerSpecError when no
 * part comes within 10 s.
 */
export function readWorkerSpec(
  channel: WorkerChannel = thisProcess(),
  timers: Timers = systemTimers,
): Promise<WorkerSpec | undefined> {
  const { send } = channel
  if (!channel.isWorker || channel.env[workerMarker] !== '1' || !send) return Promise.resolve(undefined)
  return new Promise((resolve, reject) => {
    const listener = (message: SpecMessage | undefined) => {
      if (message?.tollgate !== 'spec') return
      timers.clearTimeout(timer)
      channel.off('message', listener)
      resolve(message.spec)
    }
    const timer = timers.setTimeout(() => {
      channel.off('message', listener)
      reject(new NoWorkerSpecError(`no spec from the primary within ${specWaitMs / 1000} s`))
    }, specWaitMs)
    channel.on('message', listener)
    send({ tollgate: 'spec?' } satisfies SpecRequest)
  })
}

/** A marked worker's primary did not send its part in time. */
export class NoWorkerSpecError extends Error {
  override name = 'NoWorkerSpecError'
}

/** This worker's part, as the primary (runPrimary.ts) sent it. */
export async function readWorkerRole(spec: WorkerSpec): Promise<WorkerRole> {
  const { createClusterBank } = await import('../metering/createClusterBank.ts')
  return {
    devnet: spec.devnet,
    bank:
      spec.bank === undefined
        ? undefined
        : createClusterBank({
            channel: process as unknown as BankChannel,
            leaseTtlMs: spec.bank.leaseTtlMs,
            instanceId: spec.bank.instanceId,
            timeoutMs: spec.bankTimeoutMs,
          }),
    indexesFees: spec.slot === 0,
  }
}
