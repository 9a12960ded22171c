import type { LeaseNotice } from './creditBank.ts'

/**
 * Whether a notice heard from another instance (Redis pub/sub, the cluster channel) has the shape of
 * one: anything else on the channel is ignored, never thrown on inside an event emitter.
 */
export function isLeaseNotice(value: unknown): value is LeaseNotice {
  if (typeof value !== 'object' || value === null) return false
  const { kind, account, subjects, day } = value as Record<string, unknown>
  return (
    (kind === 'recall' || kind === 'returned') &&
    typeof account === 'string' &&
    typeof day === 'string' &&
    Array.isArray(subjects) &&
    subjects.every((subject) => typeof subject === 'string')
  )
}
