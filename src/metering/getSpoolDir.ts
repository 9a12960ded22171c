import { dirname, join } from 'node:path'
import type { Config } from '../config/configSchema.ts'

/** The usage spool's directory: metering.spoolDir, else `spool` beside the SQLite file, else ./data/spool. */
export function getSpoolDir(config: Pick<Config, 'metering' | 'storage'>): string {
  if (config.metering.spoolDir !== undefined) return config.metering.spoolDir
  const { storage } = config
  if ('sqlite' in storage && storage.sqlite !== ':memory:') return join(dirname(storage.sqlite), 'spool')
  return join('data', 'spool')
}
