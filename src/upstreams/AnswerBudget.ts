import { ResponseTooLargeError, ServerBusyError } from '../errors/limitErrors.ts'
import type { TollgateError } from '../errors/TollgateError.ts'
import { ByteBulkhead, type ByteHolder } from '../failsafe/ByteBulkhead.ts'

const noShares: readonly string[] = []

/** Bodies and answers this small are never refused for the process's sake, nor watched until sent. */
export const smallMessageBytes = 64 * 1024

export type AnswerMemoryOptions = {
  /** One request's answers, a batch's added up (`server.maxAnswerBytes`). */
  maxRequestBytes: number
  /** Large answers held by the whole process at once, until sent (`server.maxAnswerBytesInFlight`). */
  maxBytes: number
  /** Of maxBytes, what one key's requests may hold, and one client address's (`server.maxAnswerBytesInFlightPerClient`). */
  shareBytes: number
}

/**
 * What one request's answers may hold: at most `maxRequestBytes` in all, and beyond its first
 * smallMessageBytes a part of the process's bound on answers in flight (within its key's and its
 * client address's shares of it: ByteBulkhead's `shares`), held until the transport
 * has sent the answer (or dropped it) and calls `release`. Bytes are taken as they come in from
 * upstreams (createUpstream's collector), and for answers from the cache as they are found, so no
 * answer is held whole before it is known to fit.
 */
export class AnswerBudget {
  #takenBytes = 0
  #released = false
  readonly #held: ByteHolder

  constructor(
    private readonly maxRequestBytes: number,
    private readonly shared: ByteBulkhead,
    shares: readonly string[],
  ) {
    this.#held = shared.holder(shares)
  }

  /** Takes `bytes` of an answer: undefined when they fit, else the refusal to answer with. */
  take(bytes: number): TollgateError | undefined {
    // an attempt still coming in after its client left (about to be aborted) holds nothing more
    if (this.#released) return undefined
    if (this.#takenBytes + bytes > this.maxRequestBytes)
      return new ResponseTooLargeError(this.maxRequestBytes)
    if (!this.#held.take(bytes)) return new ServerBusyError({ logDetails: 'answers in flight' })
    this.#takenBytes += bytes
    return undefined
  }

  /** Bytes of an answer that was dropped (a failed or superseded attempt): no longer held. */
  giveBack(bytes: number): void {
    this.#takenBytes = Math.max(0, this.#takenBytes - bytes)
    this.#held.giveBack(bytes)
  }

  /**
   * A budget of its own, from the same bound but in no key's or address's share, for work shared
   * with other requests (a cache load, which other keys' calls may join: they must not be refused
   * for the share of the request that began it); each caller then takes the answer it is given on
   * its own budget, within its shares. Released when that work ends.
   */
  forShared(): AnswerBudget {
    return new AnswerBudget(this.maxRequestBytes, this.shared, noShares)
  }

  /** The request's answer is sent or dropped: everything it held is free. */
  release(): void {
    this.#released = true
    this.#takenBytes = 0
    this.#held.release()
  }
}

export type AnswerMemory = {
  /**
   * A new request's budget, counted in `shares` (its key's, its client address's); `maxRequestBytes`
   * lowers the request's own bound (a WebSocket's buffer).
   */
  forRequest(shares: readonly string[], maxRequestBytes?: number): AnswerBudget
  /** Bytes of large answers held now, by the whole process. */
  inUseBytes(): number
}

/** The process's answers in flight, handing each request (or WebSocket message) its budget. */
export function createAnswerMemory(options: AnswerMemoryOptions): AnswerMemory {
  const shared = new ByteBulkhead(options.maxBytes, smallMessageBytes, options.shareBytes)
  return {
    forRequest: (shares, maxRequestBytes = options.maxRequestBytes) =>
      new AnswerBudget(Math.min(maxRequestBytes, options.maxRequestBytes), shared, shares),
    inUseBytes: () => shared.inUseBytes,
  }
}
