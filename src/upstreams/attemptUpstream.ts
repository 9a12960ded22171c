import type { Buffer } from 'node:buffer'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import { withTimeout } from '../failsafe/withTimeout.ts'
import type { AnswerBudget } from './AnswerBudget.ts'
import type { TraceHeaders, Upstream } from './createUpstream.ts'
import { type AttemptFailure, type AttemptResult, judgeAttempt, type Verdict } from './judgeAttempt.ts'

export type AttemptStops = {
  /** The client's: it went away. */
  cancellation?: Cancellation | undefined
  /** The call's: another attempt (a hedge) answered first. */
  superseded?: Cancellation | undefined
  timers?: Timers
  /** The client's answer budget: an answer past it stops the attempt with its refusal. */
  budget?: AnswerBudget | undefined
  /** The W3C trace context to send the node (a traced call). */
  traceHeaders?: TraceHeaders | undefined
}

/**
 * One call to one upstream, bounded by `timeoutMs`, the client's cancellation and the call's own
 * (a hedge won), judged. A stopped attempt aborts its request, and ends even if the request never
 * started (still queued for a connection, it has no abort yet). One promise per attempt (withTimeout's):
 * the request reports through a callback, and `judged` (called once, with the verdict, as it is
 * reached) gives what the promise resolves with, so that a caller's bookkeeping needs no promise of its own.
 */
export function attemptUpstream<T = Verdict>(
  upstream: Upstream,
  body: string | Buffer,
  timeoutMs: number,
  stops: AttemptStops = {},
  judged: (verdict: Verdict) => T = (verdict) => verdict as T,
): Promise<T> {
  let abort: ((reason: Error) => void) | undefined
  let stoppedFor: string | undefined
  let unsubscribeClient: (() => void) | undefined
  let unsubscribeCall: (() => void) | undefined
  const judge = (result: AttemptResult): Verdict => {
    unsubscribeClient?.()
    unsubscribeCall?.()
    const verdict = judgeAttempt(result)
    // an answer that is not the client's (a failure to retry) is not held for it
    if ('response' in result && !('answer' in verdict)) stops.budget?.giveBack(result.response.body.length)
    return verdict
  }
  const stop = (result: AttemptResult): T => {
    const verdict = judge(result)
    if (stoppedFor === undefined) {
      stoppedFor = (verdict as AttemptFailure).reason
      abort?.(new Error(stoppedFor))
    }
    return judged(verdict)
  }
  return withTimeout<T>(
    (settle) => {
      unsubscribeClient = stops.cancellation?.onCancel(() => settle(stop({ clientGone: true })))
      if (stoppedFor !== undefined) return
      unsubscribeCall = stops.superseded?.onCancel(() => settle(stop({ superseded: true })))
      if (stoppedFor !== undefined) return
      upstream.dispatch(
        body,
        {
          onStart(abortRequest) {
            abort = abortRequest
            if (stoppedFor !== undefined) abortRequest(new Error(stoppedFor))
          },
          budget: stops.budget,
          traceHeaders: stops.traceHeaders,
        },
        (result) => {
          if (stoppedFor === undefined) settle(judged(judge(result)))
        },
      )
    },
    timeoutMs,
    () => stop({ timedOutMs: timeoutMs, sent: abort !== undefined }),
    stops.timers ?? systemTimers,
  )
}
