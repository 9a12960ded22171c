import type { Cancellation } from '../failsafe/Cancellation.ts'
import { systemTimers, type Timers } from '../failsafe/Timers.ts'
import { withTimeout } from '../failsafe/withTimeout.ts'
import type { Upstream } from './createUpstream.ts'
import { type AttemptFailure, type AttemptResult, judgeAttempt, type Verdict } from './judgeAttempt.ts'

export type AttemptStops = {
  /** The client's: it went away. */
  cancellation?: Cancellation | undefined
  /** The call's: another attempt (a hedge) answered first. */
  superseded?: Cancellation | undefined
  timers?: Timers
}

/**
 * One call to one upstream, bounded by `timeoutMs`, the client's cancellation and the call's own
 * (a hedge won), judged. A stopped attempt aborts its request, and ends even if the request never
 * started (still queued for a connection, it has no abort yet).
 */
export async function attemptUpstream(
  upstream: Upstream,
  body: string,
  timeoutMs: number,
  stops: AttemptStops = {},
): Promise<Verdict> {
  let abort: ((reason: Error) => void) | undefined
  let stoppedFor: string | undefined
  const stop = (result: AttemptResult): AttemptResult => {
    if (stoppedFor === undefined) {
      stoppedFor = (judgeAttempt(result) as AttemptFailure).reason
      abort?.(new Error(stoppedFor))
    }
    return result
  }
  let unsubscribeClient: (() => void) | undefined
  let unsubscribeCall: (() => void) | undefined
  const request = new Promise<AttemptResult>((resolve) => {
    unsubscribeClient = stops.cancellation?.onCancel(() => resolve(stop({ clientGone: true })))
    unsubscribeCall = stops.superseded?.onCancel(() => resolve(stop({ superseded: true })))
    if (stoppedFor !== undefined) return
    upstream
      .post(body, {
        onStart(abortRequest) {
          abort = abortRequest
          if (stoppedFor !== undefined) abortRequest(new Error(stoppedFor))
        },
      })
      .then(
        (response) => resolve({ response }),
        (error: Error & { code?: string }) => resolve({ error }),
      )
  })
  const result = await withTimeout(
    request,
    timeoutMs,
    () => stop({ timedOutMs: timeoutMs }),
    stops.timers ?? systemTimers,
  )
  unsubscribeClient?.()
  unsubscribeCall?.()
  return judgeAttempt(result)
}
