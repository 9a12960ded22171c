import { RateLimitError } from '../errors/limitErrors.ts'
import type { TollgateError } from '../errors/TollgateError.ts'
import type { LocalBalance } from './LocalBalance.ts'
import type { LocalLedger } from './LocalLedger.ts'
import type { Admission, MeterSubject } from './meterTypes.ts'

/** A call this process's lease could not admit, waiting for an exchange with the bank. */
export type WaitingCall = {
  subject: MeterSubject
  costCredits: number
  /** Exchanges that neither served nor refused it (bounded: it is refused after a few). */
  rounds: number
  /** Set when the call first waited for a recall: it is refused if the credits are not back by then. */
  recallUntil: number | undefined
  resolve: (admission: Admission) => void
  reject: (err: unknown) => void
}

/** What the bank's reply said of one subject, for the calls that wait on it. */
export type SubjectAnswer = { waitMs: number; balance: LocalBalance; othersFreeCredits: number }

export type AnsweredCalls = {
  /** Calls that wait on: they ask again at once. */
  asking: WaitingCall[]
  /** Calls that wait for a recall to bring credits back (until their recallUntil at most). */
  parked: WaitingCall[]
  /** Subjects a call started waiting for a recall of: the other instances are asked, once. */
  recalls: Set<string>
  /** When the first parked call's wait ends. */
  parkUntilMs: number | undefined
}

/** The most exchanges a call that is neither served nor refused asks for before it is refused. */
const maxRounds = 4

/**
 * After an exchange, each waiting call is admitted (it fits now), refused (it fits nowhere: not here,
 * not in what the bank has left, not in what the others hold unspent; or the per-second budget named
 * a wait), parked (it fits only with credits others hold unspent: they are recalled, and the call
 * waits at most `recallMs`), or asks again (a bounded number of times).
 */
export function answerWaitingCalls(
  ledger: LocalLedger,
  calls: WaitingCall[],
  answers: ReadonlyMap<string, SubjectAnswer>,
  { recallMs, closing }: { recallMs: number; closing: boolean },
): AnsweredCalls {
  const kept: WaitingCall[] = []
  const parked: WaitingCall[] = []
  const recalls = new Set<string>()
  let parkUntilMs: number | undefined
  for (const call of calls) {
    const nowMs = ledger.now()
    const { subject, costCredits } = call
    const refusal = ledger.refusalOf(subject, costCredits, nowMs)
    if (refusal === undefined) {
      call.resolve(ledger.hold(subject, costCredits, nowMs))
      continue
    }
    const onKey = refusal.check === 'key' || refusal.check === 'keyRate'
    const answer = answers.get(onKey ? subject.keyCounter : subject.accountCounter)
    let final: TollgateError | undefined
    if (refusal.check === 'account' || refusal.check === 'key') {
      const limit = refusal.check === 'key' ? (subject.keyDailyCredits ?? 0) : subject.accountDailyCredits
      const left = answer === undefined ? 0 : ledger.left(answer.balance, limit, nowMs)
      if (answer !== undefined && left < costCredits && left + answer.othersFreeCredits >= costCredits) {
        // it fits only with credits other instances hold unspent: they are asked for them, and
        // the call waits (at most recallMs) for them to come back
        if (!closing && (call.recallUntil === undefined || nowMs < call.recallUntil)) {
          if (call.recallUntil === undefined) {
            call.recallUntil = nowMs + recallMs
            recalls.add(onKey ? subject.keyCounter : subject.accountCounter)
          }
          parkUntilMs = Math.min(parkUntilMs ?? call.recallUntil, call.recallUntil)
          parked.push(call)
          continue
        }
      }
      // it fits in neither this lease, nor what the bank has left, nor what others gave back: refused
      if (left < costCredits) final = refusal.error
    } else if (answer !== undefined && answer.waitMs > 0) {
      const kind = refusal.check === 'keyRate' ? 'keyCreditsPerSecond' : 'planCreditsPerSecond'
      final = new RateLimitError(kind, answer.waitMs)
    }
    if (final) call.reject(final)
    else kept.push(call)
  }
  // each exchange serves or refuses someone (or starts a recall); should one not, the calls that
  // do not wait for a recall do not ask for ever (parked ones are bounded by their recallUntil)
  if (kept.length + parked.length === calls.length && recalls.size === 0) {
    for (const call of kept) call.rounds++
    for (const call of kept.filter((each) => each.rounds > maxRounds))
      call.reject(ledger.refusalOf(call.subject, call.costCredits, ledger.now())?.error)
  }
  const asking = kept.filter((call) => call.rounds <= maxRounds)
  return { asking, parked, recalls, parkUntilMs }
}
