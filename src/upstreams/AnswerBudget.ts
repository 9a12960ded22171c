import { ResponseTooLargeError, ServerBusyError, type TollgateError } from '../errors/errors.ts'
import { ByteBulkhead } from '../failsafe/ByteBulkhead.ts'

/** Each request's first answer bytes that the process's bound never refuses: small answers always go. */
export const answerFreeBytes = 64 * 1024

export type AnswerMemoryOptions = {
  /** One request's answers, a batch's added up (`server.maxAnswerBytes`). */
  maxRequestBytes: number
  /** Large answers held by the whole process at once, until sent (`server.maxAnswerBytesInFlight`). */
  maxBytes: number
  /** Each request's first bytes, never refused for the process's sake: small answers always go. */
  freeBytes: number
}

/**
 * What one request's answers may hold: at most `maxRequestBytes` in all, and beyond its first
 * `freeBytes`, a share of the process's bound on answers in flight, held until the transport has sent
 * the answer (or dropped it) and calls `release`. Bytes are taken as they come in from upstreams
 * (createUpstream's collector), and for answers from the cache as they are found, so that no answer
 * is held whole before it is known to fit.
 */
export class AnswerBudget {
  #takenBytes = 0
  /** What this request holds of the process's bound. */
  #sharedBytes = 0
  #released = false

  constructor(
    private readonly options: AnswerMemoryOptions,
    private readonly shared: ByteBulkhead,
  ) {}

  /** Takes `bytes` of an answer: undefined when they fit, else the refusal to answer with. */
  take(bytes: number): TollgateError | undefined {
    // a shared upstream load that outlives its first requester (the cache's) is no longer counted
    if (this.#released) return undefined
    const { maxRequestBytes, freeBytes } = this.options
    const taken = this.#takenBytes + bytes
    if (taken > maxRequestBytes) return new ResponseTooLargeError(maxRequestBytes)
    const shared = Math.max(0, taken - freeBytes) - this.#sharedBytes
    if (shared > 0) {
      if (!this.shared.tryTake(shared)) return new ServerBusyError({ logDetails: 'answers in flight' })
      this.#sharedBytes += shared
    }
    this.#takenBytes = taken
    return undefined
  }

  /** Bytes of an answer that was dropped (a failed or superseded attempt): no longer held. */
  giveBack(bytes: number): void {
    if (this.#released) return
    this.#takenBytes -= bytes
    const shared = Math.max(0, this.#takenBytes - this.options.freeBytes)
    this.shared.giveBack(this.#sharedBytes - shared)
    this.#sharedBytes = shared
  }

  /** The request's answer is sent or dropped: everything it held is free. */
  release(): void {
    if (this.#released) return
    this.#released = true
    this.shared.giveBack(this.#sharedBytes)
    this.#sharedBytes = 0
  }
}

export type AnswerMemory = {
  /** A new request's budget; `maxRequestBytes` lowers the request's own bound (a WebSocket's buffer). */
  forRequest(maxRequestBytes?: number): AnswerBudget
}

/** The process's answers in flight, handing each request (or WebSocket message) its budget. */
export function createAnswerMemory(options: AnswerMemoryOptions): AnswerMemory {
  const shared = new ByteBulkhead(options.maxBytes)
  return {
    forRequest: (maxRequestBytes) =>
      new AnswerBudget(
        maxRequestBytes === undefined || maxRequestBytes >= options.maxRequestBytes
          ? options
          : { ...options, maxRequestBytes },
        shared,
      ),
  }
}
