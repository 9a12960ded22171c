import type { KeyRegistry } from '../auth/createKeyRegistry.ts'
import type { KeyAdmin } from '../auth/keyAdmin.ts'
import type { KeyStore } from '../auth/keyStore.ts'
import type { Config, NetworkConfig } from '../config/configSchema.ts'
import { type Devnet, devnetNetwork, startDevnet } from '../devnet/startDevnet.ts'
import type { WorkerRole } from './workerRole.ts'

/** The embedded devnet, when the config runs one. */
export type DevnetStage = {
  /** Set when this process started it (not in a worker: the primary did). */
  devnet: Devnet | undefined
  /** The devnet's network, served beside the config's ones. */
  embedded: NetworkConfig | undefined
  /** Stops the anvil this process started. */
  close(): Promise<void>
}

export type DevnetStageDeps = {
  keyStore: KeyStore
  keyAdmin: KeyAdmin
  keys: KeyRegistry
  /** Set in a worker of `--workers N`: the primary's devnet, already started and seeded. */
  worker: WorkerRole | undefined
}

/** Starts and seeds the embedded devnet, makes its demo key and reads it into the key registry. */
export async function startDevnetStage(config: Config, deps: DevnetStageDeps): Promise<DevnetStage> {
  const none = async () => {}
  if (!config.devnet) return { devnet: undefined, embedded: undefined, close: none }
  // the primary started and seeded it, and made the demo key
  if (deps.worker?.devnet)
    return { devnet: undefined, embedded: devnetNetwork(deps.worker.devnet), close: none }
  const devnet = await startDevnet(config.devnet, { store: deps.keyStore, admin: deps.keyAdmin })
  const close = () => devnet.anvil.stop()
  try {
    await deps.keys.refresh()
  } catch (err) {
    await close()
    throw err
  }
  return { devnet, embedded: devnetNetwork(devnet.anvil), close }
}
