import cluster from 'node:cluster'
import type { Config } from '../config/configSchema.ts'
import type { DevnetEndpoint } from '../devnet/startDevnet.ts'
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
  /** The primary's bank lease ttl when the primary is the bank (no Redis). */
  bankLeaseTtlMs: number | undefined
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
 * In a worker of `tollgate start --workers N`, its part (WorkerSpec), asked of the primary over
 * the IPC channel; its config is the primary's (the file as last reloaded, the command line's
 * options applied): a worker never reads the file itself, which may have changed since (a refused
 * port, an invalid file). Undefined in any other process.
 */
export function readWorkerSpec(): Promise<WorkerSpec | undefined> {
  const send = process.send?.bind(process)
  if (!cluster.isWorker || !send) return Promise.resolve(undefined)
  return new Promise((resolve) => {
    const listener = (message: SpecMessage | undefined) => {
      if (message?.tollgate !== 'spec') return
      process.off('message', listener)
      resolve(message.spec)
    }
    process.on('message', listener)
    send({ tollgate: 'spec?' } satisfies SpecRequest)
  })
}

/** This worker's part, as the primary (runPrimary.ts) sent it. */
export async function readWorkerRole(spec: WorkerSpec): Promise<WorkerRole> {
  const { createClusterBank } = await import('../metering/createClusterBank.ts')
  return {
    devnet: spec.devnet,
    bank:
      spec.bankLeaseTtlMs === undefined
        ? undefined
        : createClusterBank({
            channel: process as unknown as BankChannel,
            leaseTtlMs: spec.bankLeaseTtlMs,
            timeoutMs: spec.bankTimeoutMs,
          }),
    indexesFees: spec.slot === 0,
  }
}
