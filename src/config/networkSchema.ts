import { z } from 'zod'
import { upstreamSchema } from './upstreamSchema.ts'

/** One entry of `networks`: a chain, the nodes that serve it, and its eth_getLogs limits. */
export const networkSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expected lowercase letters, digits and dashes'),
  chainId: z.int().positive(),
  upstreams: z.array(upstreamSchema).min(1, 'expected at least one upstream'),
  partners: z.array(upstreamSchema).default([]),
  /** Host names that select this network, besides `<name>.` as the first label of the Host header. */
  hosts: z.array(z.string().min(1)).default([]),
  /** eth_getLogs over a wider block range is refused (-32602) before any node is asked (default: logsLimitDefaults). */
  maxLogsBlockRange: z.int().positive().optional(),
  /** An eth_getLogs answer with more logs is refused (-32005, with a smaller range to try; default: logsLimitDefaults). */
  maxLogsResults: z.int().positive().optional(),
  /**
   * The network's per-transaction gas cap (EIP-7825: 16777216 from Osaka): eth_call and
   * eth_estimateGas `gas` above it is lowered to it. Unset: learned from a node's refusal.
   */
  maxTransactionGas: z.int().positive().optional(),
})
