import { z } from 'zod'

/** The shares of the daily credits (in %) an alert is sent at when none are given. */
export const defaultThresholds: readonly number[] = [50, 75, 90, 100]

/** At most this many thresholds per account; each a whole percent from 1 to 100. */
const maxThresholds = 10

/** `json`: the event as JSON; `slack`: `{"text": ...}`, which a Slack (or compatible) incoming webhook takes. */
export const alertFormats = ['json', 'slack'] as const
export type AlertFormat = (typeof alertFormats)[number]

/** An account's alert settings as they are kept (the secret sealed: alertSecret.ts). */
export type AlertSettings = {
  accountId: number
  webhookUrl: string
  /** Ascending, distinct whole percents. */
  thresholds: number[]
  format: AlertFormat
  sealedSecret: string
  updatedAt: Date
}

/** A webhook URL: http or https, no credentials in it (they would be shown), at most 2,000 characters. */
export const webhookUrlSchema = z
  .string()
  .max(2_000, 'the webhook URL is too long: at most 2000 characters')
  .refine((text) => toWebhookUrl(text) !== undefined, {
    message: 'the webhook URL must be an http:// or https:// URL without a user name or password',
  })

const thresholdsSchema = z
  .array(z.int().min(1).max(100))
  .min(1)
  .max(maxThresholds)
  .transform((list) => [...new Set(list)].sort((a, b) => a - b))

/** What a PUT of alert settings takes: every member optional once settings exist. */
export const alertSettingsBody = z.strictObject({
  webhook: webhookUrlSchema.optional(),
  thresholds: thresholdsSchema.optional(),
  format: z.enum(alertFormats).optional(),
  /** A new signing secret in place of the one in use (shown once, as the first). */
  rotateSecret: z.boolean().optional(),
})
export type AlertSettingsChange = z.infer<typeof alertSettingsBody>

function toWebhookUrl(text: string): URL | undefined {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return undefined
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
  if (url.username !== '' || url.password !== '') return undefined
  return url
}

/** `--at 50,75,90,100` as thresholds; undefined when it is not a list of whole percents. */
export function parseThresholdList(text: string): number[] | undefined {
  const parts = text.split(',').map((part) => part.trim())
  if (!parts.every((part) => /^\d{1,3}$/.test(part))) return undefined
  const parsed = thresholdsSchema.safeParse(parts.map(Number))
  return parsed.success ? parsed.data : undefined
}
