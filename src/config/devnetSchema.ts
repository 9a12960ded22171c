import { z } from 'zod'

/** The embedded anvil devnet's settings (`devnet` in the config). */
export const devnetSchema = z.strictObject({
  /** Seconds between blocks; 0 mines a block per transaction. */
  blockTimeSeconds: z.number().min(0).default(2),
  seed: z.boolean().default(true),
})
