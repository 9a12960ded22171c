import { type ErrorOptions, TollgateError } from './TollgateError.ts'

// Limits: credits, rates, sizes and capacity; the 402 and 429s say when to come back (Retry-After).

/** `Retry-After` is whole seconds, at least 1 (0 would invite an immediate retry that fails again). */
function toRetryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000))
}

export class DailyLimitError extends TollgateError {
  override name = 'DailyLimitError'
  /** `msToReset`: until 00:00 UTC, when the balance is whole again. */
  constructor(msToReset: number) {
    super(402, 402, 'Payment Required', {
      retryAfterSeconds: toRetryAfterSeconds(msToReset),
      wireFields: {
        event: -33000,
        details: 'You have reached your daily credit limit. The balance resets at 00:00 UTC.',
      },
    })
  }
}

/** The three 429s of docs/compatibility.md §1, told apart by their event code. */
export const rateLimitEvents = {
  planCreditsPerSecond: {
    event: -33200,
    details:
      "You have exceeded your plan's credits per second throughput limit. Slow down or upgrade your plan.",
  },
  keyCreditsPerSecond: {
    event: -33300,
    details: "You have exceeded this key's own credits per second throughput limit.",
  },
  keyCreditsPerDay: {
    event: -33400,
    details: "You have reached this key's own daily credit limit. It resets at 00:00 UTC.",
  },
} as const

export class RateLimitError extends TollgateError {
  override name = 'RateLimitError'
  /**
   * `retryAfterMs`: until the call would be admitted (the bucket refilled, or the day over); kept
   * to the millisecond for work that may wait that long (a split eth_getLogs' next chunk).
   */
  constructor(
    /** Which limit refused: usage alerts tell a per-second refusal from a daily one. */
    readonly kind: keyof typeof rateLimitEvents,
    readonly retryAfterMs: number,
  ) {
    super(429, 429, 'Too Many Requests', {
      wireFields: { ...rateLimitEvents[kind] },
      retryAfterSeconds: toRetryAfterSeconds(retryAfterMs),
    })
  }
}

/**
 * A call that waited for one of its key's calls in flight at the nodes (its plan's
 * `maxCallsInFlight`, docs/plans.md) to end until too little of its deadline was left to send it: a
 * 429 in the hosted service's shape, with an event code of tollgate's own.
 */
export class CallsInFlightLimitError extends TollgateError {
  override name = 'CallsInFlightLimitError'
  constructor(limit: number) {
    super(429, 429, 'Too Many Requests', {
      wireFields: {
        event: -33500,
        details: `This key already has ${limit} calls in flight at the nodes, its plan's limit: wait for them to end, or upgrade your plan.`,
      },
      retryAfterSeconds: 1,
    })
  }
}

/** Too many wrong secrets or JWTs from the client's address, or at a key under attack; nothing was checked. */
export class AuthRateLimitError extends TollgateError {
  override name = 'AuthRateLimitError'
  /** `retryAfterMs`: until the client may present a credential again. */
  constructor(retryAfterMs: number) {
    super(429, 429, 'Too Many Requests', {
      wireFields: { details: 'too many failed authentications; try again later' },
      retryAfterSeconds: toRetryAfterSeconds(retryAfterMs),
    })
  }
}

/** An account's requests to the account API beyond its rate on this gateway (a script in a loop). */
export class AccountApiRateError extends TollgateError {
  override name = 'AccountApiRateError'
  constructor(retryAfterMs: number) {
    super(429, 429, 'too many account API requests: slow down (Retry-After says when)', {
      retryAfterSeconds: toRetryAfterSeconds(retryAfterMs),
    })
  }
}

/**
 * Not an answer: the request log's note that more requests of a key were refused at the door in a
 * minute than it keeps (a stranger who knows the key's value cannot crowd out the account's rows).
 */
export class RefusalsLeftOutError extends TollgateError {
  override name = 'RefusalsLeftOutError'
  constructor(leftOut: number) {
    super(
      429,
      429,
      `${leftOut} more requests refused before they were let in, in one minute, not logged one by one`,
    )
  }
}

export class SubscriptionLimitError extends TollgateError {
  override name = 'SubscriptionLimitError'
  constructor(limit: number) {
    super(-32005, 200, `subscription limit reached: at most ${limit} per connection`)
  }
}

/** A WebSocket message beyond `websocket.maxInFlightRequests` unanswered ones: refused, never queued. */
export class InFlightLimitError extends TollgateError {
  override name = 'InFlightLimitError'
  constructor(limit: number) {
    super(-32005, 200, `too many requests in flight on this connection: at most ${limit}`)
  }
}

/**
 * A request's answers passed `server.maxAnswerBytes` (a batch's answers add up): the call whose
 * answer crossed it, and those after it, get this instead (geth's `response too large`).
 */
export class ResponseTooLargeError extends TollgateError {
  override name = 'ResponseTooLargeError'
  constructor(maxBytes: number) {
    super(-32003, 200, `response too large: a request's answers may hold at most ${maxBytes} bytes`)
  }
}

/**
 * The process holds as many large answers (`server.maxAnswerBytesInFlight`) or request bodies
 * (`server.maxBodyBytesInFlight`) as it may: this one waits for others to be sent or read.
 */
export class ServerBusyError extends TollgateError {
  override name = 'ServerBusyError'
  constructor(options?: ErrorOptions) {
    super(-32005, 503, 'server busy, try again later', { ...options, retryAfterSeconds: 1 })
  }
}

/**
 * An eth_getLogs answer with more logs than the network allows (docs/compatibility.md §7), worded as
 * the hosted service words it, with the range up to the block where the limit was passed.
 */
export class LogResultsLimitError extends TollgateError {
  override name = 'LogResultsLimitError'
  constructor(limit: number, suggestedRange?: readonly [bigint, bigint]) {
    const range = suggestedRange?.map((block) => `0x${block.toString(16)}`).join(', ')
    super(
      -32005,
      200,
      `query returned more than ${limit} results${range ? `. Try with this block range [${range}].` : ''}`,
    )
  }
}

/** The shared credit balance (Redis) cannot be reached and `metering.onRedisDown` is `closed`. */
export class BalanceUnavailableError extends TollgateError {
  override name = 'BalanceUnavailableError'
  constructor(options?: ErrorOptions) {
    super(-32603, 503, 'credit balance unavailable, try again later', options)
  }
}
