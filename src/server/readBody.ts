import { Buffer } from 'node:buffer'
import type { IncomingMessage } from 'node:http'
import { performance } from 'node:perf_hooks'
import { BodyStalledError, BodyTooLargeError } from '../errors/httpErrors.ts'
import { ServerBusyError } from '../errors/limitErrors.ts'
import type { ByteHolder } from '../failsafe/ByteBulkhead.ts'

/** What a body holds of the process's bound on bodies in flight, and how long it may stall holding it. */
export type BodyHold = {
  /** Takes each chunk; the caller releases it when the request ends. */
  holder: ByteHolder
  /**
   * Once the body holds part of the bound, each stallStepBytes of it must come within this of the
   * one before (the first, of the moment it began to hold), or the body is refused
   * (BodyStalledError) and gives its part back. 0: no limit.
   */
  stallTimeoutMs: number
}

/**
 * The steps a body holding part of the bound must make within its stall timeout (the rest of the
 * body, when less is left, must come within one): a client sending at any real speed makes one in
 * milliseconds; one that stops, or trickles, holds its part for one timeout after its last step.
 */
const stallStepBytes = 64 * 1024

/**
 * Reads the whole request body, refusing it as soon as it passes `maxBytes`, as soon as the
 * process's bound on bodies in flight (or its shares) has no room for it, or once it stalls while
 * holding part of that bound (`held`, when given). `done` is called once, with the bytes or with
 * what stopped them (BodyTooLargeError, ServerBusyError, BodyStalledError, or the stream's own error).
 */
export function readBody(
  req: IncomingMessage,
  maxBytes: number,
  done: (body: Buffer | Error) => void,
  held?: BodyHold,
): void {
  const declared = Number(req.headers['content-length'])
  const stallTimeoutMs = held?.stallTimeoutMs ?? 0
  if (declared > maxBytes) {
    done(new BodyTooLargeError(maxBytes))
    return
  }
  // made for the first chunk (most bodies have one): an empty list would be given room for 16
  let chunks: Buffer[] | undefined
  let size = 0
  let finished = false
  /** Set once the body holds part of the bound (and its stall timeout is on): the next check. */
  let stall: NodeJS.Timeout | undefined
  /** When it last made a step (performance.now), and the bytes since. */
  let steppedMs = 0
  let stepBytes = 0
  // a body refused mid-stream is still drained to its end, and a stream may fail after it ended
  const finish = (body: Buffer | Error) => {
    if (finished) return
    finished = true
    clearTimeout(stall)
    done(body)
  }
  const refuse = (refusal: Error) => {
    req.removeAllListeners('data')
    req.resume()
    finish(refusal)
  }
  const checkStep = () => {
    const leftMs = steppedMs + stallTimeoutMs - performance.now()
    if (leftMs > 0) stall = setTimeout(checkStep, leftMs)
    else refuse(new BodyStalledError(stallStepBytes, stallTimeoutMs))
  }
  /** Counts `bytes` of a body holding part of the bound towards its next step (beginning to hold is the first). */
  const step = (bytes: number) => {
    if (stall === undefined) {
      steppedMs = performance.now()
      stall = setTimeout(checkStep, stallTimeoutMs)
      return
    }
    stepBytes += bytes
    if (stepBytes < stallStepBytes) return
    steppedMs = performance.now()
    stepBytes = 0
  }
  req.on('data', (chunk: Buffer) => {
    if (size + chunk.length > maxBytes) return refuse(new BodyTooLargeError(maxBytes))
    if (held) {
      if (!held.holder.take(chunk.length)) {
        return refuse(new ServerBusyError({ logDetails: 'request bodies in flight' }))
      }
      if (held.holder.holdsBound && stallTimeoutMs > 0) step(chunk.length)
    }
    size += chunk.length
    if (chunks) chunks.push(chunk)
    else chunks = [chunk]
  })
  req.on('end', () =>
    finish(chunks?.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks ?? [], size)),
  )
  req.on('error', finish)
}

/** The whole body as text, for the routes that read one now and then (admin, dashboard). */
export function readBodyText(req: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) =>
    readBody(req, maxBytes, (body) => (Buffer.isBuffer(body) ? resolve(body.toString()) : reject(body))),
  )
}
