import { TollgateError } from '../errors/TollgateError.ts'
import type { Admission, Meter, MeterSubject, Settlement } from '../metering/meterTypes.ts'
import { priceOf } from '../methods/priceOf.ts'

/** The label usage is recorded under for requests refused as a whole (403, 413, 415, parse errors). */
const rejectedLabel = '(rejected)'

/**
 * A request refused as a whole, charged what priceOf says: input refused costs 5 credits
 * (docs/compatibility.md §2), unless the balance cannot pay even that (then the 402/429 is the answer
 * instead); a refusal that is ours (5xx: a busy server) or the balance's own (402/429) costs nothing.
 * Returns the error to answer with, and what was charged.
 */
export async function chargeRefusal(
  meter: Meter,
  subject: MeterSubject,
  network: string,
  refusal: unknown,
): Promise<{ error: unknown; settlement: Settlement | undefined }> {
  const httpStatus = refusal instanceof TollgateError ? refusal.httpStatus : 500
  const costCredits = priceOf({ kind: 'rejectedRequest', httpStatus })
  if (costCredits === 0) return { error: refusal, settlement: undefined }
  let admission: Admission
  try {
    admission = await meter.admit(subject, costCredits)
  } catch (limit) {
    return { error: limit, settlement: undefined }
  }
  const settlement = meter.settle(admission, [{ method: rejectedLabel, network, credits: costCredits }])
  return { error: refusal, settlement }
}
