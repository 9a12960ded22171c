import type { Buffer } from 'node:buffer'
import { Agent } from 'undici'
import { toDeliveryBody } from './alertPayload.ts'
import { openSecret } from './alertSecret.ts'
import type { AlertStore, AttemptResult, ClaimedEvent } from './alertStore.ts'
import { isPrivateAddress, literalAddress, publicOnlyLookup } from './publicAddresses.ts'
import { nextAttemptAt, type RetrySchedule } from './retrySchedule.ts'
import { signatureHeader } from './signWebhook.ts'

export type AlertSenderOptions = {
  retry: RetrySchedule
  /** One attempt's deadline: connecting, the answer's headers and body. */
  timeoutMs: number
  /** Deliveries in flight at once, per process. */
  concurrency: number
  /** How often due deliveries are looked for (an event made here is looked for at once). */
  pollMs: number
  /** Let webhooks reach loopback and private addresses (a receiver on the gateway's own network). */
  privateAddresses: boolean
  /** How long events and their delivery log are kept. */
  keepMs: number
}

export type AlertSenderDeps = {
  store: AlertStore
  /** The database's secret hash key: the signing secrets are sealed under it (alertSecret.ts). */
  hashKey: () => Promise<Buffer>
  now: () => number
  random?: () => number
  onError: (err: unknown) => void
}

export type AlertSender = {
  /** Looks for due deliveries now (an event was just made). */
  wake(): void
  /** Stops looking, aborts the attempts in flight (their claims let go: tried again later) and closes the connections. */
  close(): Promise<void>
}

/** The delivery log's status of an attempt whose secret could not be opened. */
const cannotSign = 'cannot sign: the signing secret cannot be opened (make a new one)'

/** How often old events are pruned. */
const pruneEveryMs = 3_600_000
/** Bytes of a receiver's answer read before its connection is dropped: the answer is never used. */
const maxAnswerBytes = 64 * 1024

/**
 * Delivers usage alert events: claims due events in the database (one process per event at a
 * time, across instances), posts each to its account's webhook with its signature, and records the
 * attempt: delivered (2xx), or due again after a backoff, or given up once past `retry.forMs`. Its
 * own small connection pool (undici) and a bound on attempts in flight; nothing here runs on a
 * call's path, and a slow receiver holds one slot for at most `timeoutMs`.
 */
export function createAlertSender(options: AlertSenderOptions, deps: AlertSenderDeps): AlertSender {
  const { store, now, onError } = deps
  const random = deps.random ?? Math.random
  const agent = new Agent({
    connections: 2,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 10_000,
    connect: {
      timeout: options.timeoutMs,
      ...(options.privateAddresses ? {} : { lookup: publicOnlyLookup }),
    },
  })
  const stopping = new AbortController()
  const inFlight = new Set<Promise<void>>()
  /** The look under way, if any (close waits for it: its claims are let go before the database closes). */
  let looking: Promise<void> | undefined
  let lookAgain = false
  let closed = false
  let timer: NodeJS.Timeout | undefined
  let lastPruneMs = 0

  function wake(): void {
    if (closed) return
    if (looking) {
      lookAgain = true
      return
    }
    looking = look()
      .catch(onError)
      .finally(() => {
        looking = undefined
        if (lookAgain && !closed) {
          lookAgain = false
          wake()
        }
      })
  }

  async function look(): Promise<void> {
    const nowMs = now()
    if (nowMs - lastPruneMs >= pruneEveryMs) {
      lastPruneMs = nowMs
      await store.pruneEvents(nowMs - options.keepMs)
    }
    const room = options.concurrency - inFlight.size
    if (room <= 0) return
    // a claim outlasts an attempt: another instance takes the event only once this one is gone
    const claimed = await store.claimDue(nowMs, room, nowMs + 3 * options.timeoutMs + 5_000)
    if (closed) {
      // stopped while claiming: left for the next look (here after a restart, or another instance)
      await Promise.all(claimed.map((event) => store.releaseClaim(event)))
      return
    }
    for (const event of claimed) {
      const attempt = deliver(event).catch(onError)
      inFlight.add(attempt)
      attempt.finally(() => {
        inFlight.delete(attempt)
        // a full batch may have left others due
        if (claimed.length === room) wake()
      })
    }
  }

  async function deliver(event: ClaimedEvent): Promise<void> {
    const settings = await store.getSettings(event.accountId)
    if (!settings) {
      // alerts turned off since it was made
      return store.recordAttempt(event, {
        status: 'alerts turned off',
        atMs: now(),
        delivered: false,
        nextAttemptAtMs: undefined,
      })
    }
    const body = toDeliveryBody(event.payload, settings.format)
    let status: string
    let delivered = false
    try {
      const secret = await openedSecret(settings.sealedSecret)
      status = secret === undefined ? cannotSign : await post(settings.webhookUrl, event.id, secret, body)
      delivered = /^2\d\d$/.test(status)
    } catch (err) {
      if (stopping.signal.aborted) return store.releaseClaim(event)
      status = failureStatus(err)
    }
    const atMs = now()
    const result: AttemptResult = {
      status,
      atMs,
      delivered,
      nextAttemptAtMs: delivered
        ? undefined
        : nextAttemptAt(options.retry, event.attempts + 1, event.createdAtMs, atMs, random()),
    }
    await store.recordAttempt(event, result)
  }

  /**
   * The signing secret, or undefined when it cannot be opened (the database's hash key changed, or
   * the sealed value is damaged): the attempt is then recorded as one that failed, on the usual
   * schedule, and given up in time, never sent unsigned.
   */
  async function openedSecret(sealed: string): Promise<string | undefined> {
    const hashKey = await deps.hashKey()
    try {
      return openSecret(sealed, hashKey)
    } catch (err) {
      onError(err)
      return undefined
    }
  }

  /** One attempt: the receiver's HTTP status as text. */
  async function post(webhookUrl: string, eventId: string, secret: string, body: string): Promise<string> {
    const url = new URL(webhookUrl)
    const literal = literalAddress(url.hostname)
    if (!options.privateAddresses && literal !== undefined && isPrivateAddress(literal))
      return 'refused: a private address (alerts.privateAddresses)'
    const response = await agent.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'tollgate-alerts',
        'tollgate-event-id': eventId,
        'tollgate-signature': signatureHeader(secret, body, Math.floor(now() / 1000)),
      },
      body,
      signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(options.timeoutMs)]),
    })
    await response.body.dump({ limit: maxAnswerBytes }).catch(() => undefined)
    return String(response.statusCode)
  }

  const tick = () => {
    timer = setTimeout(() => {
      wake()
      tick()
    }, options.pollMs)
    timer.unref()
  }
  tick()
  wake()

  return {
    wake,
    async close() {
      closed = true
      clearTimeout(timer)
      stopping.abort()
      await looking
      await Promise.allSettled([...inFlight])
      await agent.close()
    },
  }
}

/** What a failed attempt's log says: `timeout`, or `network error: <code>`. */
function failureStatus(err: unknown): string {
  const { name, code, message } = err as { name?: string; code?: string; message?: string }
  if (name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return 'timeout'
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'timeout'
  if (code === 'EPRIVATEADDRESS') return 'refused: a private address (alerts.privateAddresses)'
  return `network error: ${code ?? message ?? 'unknown'}`
}
