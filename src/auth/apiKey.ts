import { randomBytes } from 'node:crypto'
import type { PlanName } from '../config/configSchema.ts'
import type { KeySettings } from './keySettings.ts'

/** An account: what a plan's daily balance and credits per second belong to. Keys belong to one. */
export type Account = {
  id: number
  name: string
  plan: PlanName
  /** The custom plan's numbers, set per account; null on the fixed plans. */
  dailyCredits: number | null
  creditsPerSecond: number | null
  createdAt: Date
}

export type ApiKey = {
  id: number
  key: string
  name: string
  account: Account
  settings: KeySettings
  createdAt: Date
  revokedAt: Date | null
}

/** Keys are 32 lowercase hex characters (16 random bytes), the shape hosted services use. */
export function generateApiKey(): string {
  return randomBytes(16).toString('hex')
}
