import type { Config } from '../config/configSchema.ts'

/**
 * How often the head tracker polls: upstreams.headPollMs, or a smaller interval given under the
 * deprecated websocket.headPollMs or gas.pollMs (their loops are now the tracker's), so a config
 * that asked for fresher heads there still gets them.
 */
export function getHeadPollMs(config: Pick<Config, 'upstreams' | 'websocket' | 'gas'>): number {
  return Math.min(
    config.upstreams.headPollMs,
    config.websocket.headPollMs ?? Number.POSITIVE_INFINITY,
    config.gas.pollMs ?? Number.POSITIVE_INFINITY,
  )
}
