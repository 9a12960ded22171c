import type { Logger } from 'pino'
import type { CallGuard } from '../auth/authorize.ts'
import type { FilterIds } from '../auth/createFilterIds.ts'
import type { KeyEntry } from '../auth/createKeyRegistry.ts'
import type { Cancellation } from '../failsafe/Cancellation.ts'
import type { CallsInFlight } from '../metering/CallsInFlight.ts'
import type { Meter } from '../metering/meterTypes.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { AnswerBudget } from '../upstreams/AnswerBudget.ts'
import type { RequestCredits } from './RequestCredits.ts'
import type { CallTrails, RequestTrace } from './RequestTrace.ts'

/** What one authenticated request carries through the pipeline. */
export type RpcContext = {
  network: Network
  key: KeyEntry
  /** Per-call allowlist checks left after the request-level ones, if any. */
  guard: CallGuard | undefined
  meter: Meter
  /** What the request holds of the key's credits, from admission to settlement; calls that do more as they go hold more. */
  credits: RequestCredits
  /** Seals the filter ids the key's calls make, and opens those they name (docs/compatibility.md §4). */
  filterIds: FilterIds
  /** Calls may go to the network's partners when its upstreams fail (plan, header or key switch). */
  failover: boolean
  /** Each key's calls in flight at the upstreams; this key may have `maxCallsInFlight` (its plan's). */
  callsInFlight: CallsInFlight
  maxCallsInFlight: number
  /** Set when the client goes away: upstream work stops, and it is not an upstream failure. */
  cancellation: Cancellation
  /** What the request's answers may hold (a batch's add up); released by the transport once sent. */
  answerBudget: AnswerBudget
  log: Logger
  /**
   * Where each call's trail goes (the route header, the trace): undefined when nothing reads them,
   * and the request path then records none.
   */
  trails: CallTrails | undefined
  /** The request's trace, when it is traced (its steps' spans). */
  trace: RequestTrace | undefined
  /** Present on WebSocket connections: eth_subscribe and eth_unsubscribe are theirs. */
  subscriptions: SubscriptionHandler | undefined
}

export type SubscriptionHandler = {
  /** Validates the params, starts the subscription, returns its id (throws TollgateErrors). */
  subscribe(params: unknown[]): string
  unsubscribe(id: unknown): boolean
}
