import { z } from 'zod'

/** One node of a network (or of its partners): its HTTP URL, and its WebSocket URL for newHeads. */
export const upstreamSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }),
  ws: z.url({ protocol: /^wss?$/, error: 'expected a ws(s) URL' }).optional(),
  name: z.string().min(1).optional(),
})
