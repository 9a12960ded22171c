import { z } from 'zod'
import { isAddressOrRange } from '../formats/isAddressOrRange.ts'
import { parseOrigin } from '../formats/parseOrigin.ts'

/**
 * `server`: the listener (HTTP and WebSocket on one port) and what it takes from clients: bodies,
 * answers, batches, timeouts, connections, the proxies it trusts, CORS and compression.
 */
export const serverSchema = z
  .strictObject({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.int().min(0).max(65535).default(8545),
    /**
     * Processes serving the one port (node:cluster); credits stay exact across them (docs/operations.md).
     * 1: this process serves alone.
     */
    workers: z.int().min(1).max(64).default(1),
    maxBodyBytes: z
      .int()
      .positive()
      .default(5 * 1024 * 1024),
    /** Bytes of JSON-RPC request bodies held at once by the whole process (being read or run); past it, 503. */
    maxBodyBytesInFlight: z
      .int()
      .positive()
      .default(32 * 1024 * 1024),
    /**
     * Bytes of maxBodyBytesInFlight one key may hold, and one client address (past each body's
     * first 64 KiB); past it, 503. Default: a quarter of maxBodyBytesInFlight, at least maxBodyBytes.
     */
    maxBodyBytesInFlightPerClient: z.int().positive().optional(),
    /**
     * A body holding part of maxBodyBytesInFlight (past its first 64 KiB) must bring each further
     * 64 KiB within this of the one before; else 408, and what it held is freed (a stalled or
     * trickling upload). 0: no limit (requestTimeoutMs still applies).
     */
    bodyStallTimeoutMs: z.int().min(0).default(5_000),
    /**
     * Bytes of answers one request may hold, a batch's added up (over WebSocket at most
     * websocket.maxBufferedBytes); past it, -32003 `response too large`.
     */
    maxAnswerBytes: z
      .int()
      .positive()
      .default(32 * 1024 * 1024),
    /**
     * Bytes of large answers the whole process holds at once, from the upstream until sent (each
     * request's first 64 KiB never count); past it, 503 `server busy`.
     */
    maxAnswerBytesInFlight: z
      .int()
      .positive()
      .default(64 * 1024 * 1024),
    /**
     * Bytes of maxAnswerBytesInFlight one key may hold, and one client address. Default: a quarter
     * of maxAnswerBytesInFlight, at least maxAnswerBytes.
     */
    maxAnswerBytesInFlightPerClient: z.int().positive().optional(),
    /** An answer of 64 KiB or more that the client has not taken within this is dropped with its connection. */
    sendTimeoutMs: z.int().positive().default(30_000),
    maxBatchSize: z.int().positive().default(1000),
    /**
     * Arrays and objects nested inside one another in a body, the envelope's own two included;
     * deeper bodies are refused before parsing. Capped: serialising much deeper values overflows the stack.
     */
    maxJsonDepth: z.int().min(2).max(1000).default(64),
    keepAliveTimeoutMs: z.int().positive().default(65_000),
    /** A client must send a request's headers within this (else 408 and the connection closes): slowloris. */
    headersTimeoutMs: z.int().positive().default(10_000),
    /**
     * A client must send a whole request, body included, within this (else 408). It ends when the
     * request is in: the answer may take as long as upstreams.timeoutMs needs. 0: no limit.
     */
    requestTimeoutMs: z.int().min(0).default(60_000),
    /** Open connections (HTTP and WebSocket) per process; more are closed at once. */
    maxConnections: z.int().positive().default(10_000),
    /** Open connections from one client address; more are closed at once. */
    maxConnectionsPerAddress: z.int().positive().default(256),
    /**
     * Addresses maxConnectionsPerAddress and the per-address shares of bytes in flight do not apply
     * to: this machine (a local reverse proxy speaks for every client; benches).
     */
    maxConnectionsPerAddressExempt: z.array(z.string().min(1)).default(['127.0.0.1', '::1']),
    /**
     * Load balancers or reverse proxies in front of tollgate (addresses or CIDR ranges): a request
     * from one of them is counted as from the client its X-Forwarded-For names (failed
     * authentications per address). Empty: X-Forwarded-For is ignored.
     */
    trustedProxies: z
      .array(z.string().refine(isAddressOrRange, 'expected an IP address or a CIDR range (10.0.0.0/8)'))
      .default([]),
    /** How long a shutdown waits for in-flight requests before closing their connections. */
    shutdownGraceMs: z.int().min(0).default(10_000),
    /** Browsers may call the JSON-RPC and Gas API routes from any page (the key's origins allowlist still decides). */
    cors: z
      .strictObject({
        enabled: z.boolean().default(true),
        /** Pages allowed to call at all (`https://app.example`, `*.example.com`); empty: any page. */
        origins: z
          .array(
            // the same origin syntax as a key's origins allowlist, and the same stored form
            z.string().transform((origin, ctx) => {
              try {
                return parseOrigin(origin)
              } catch (err) {
                ctx.addIssue({ code: 'custom', message: (err as Error).message })
                return z.NEVER
              }
            }),
          )
          .default([]),
        /** How long a browser may reuse a preflight answer. */
        maxAgeSeconds: z.int().min(0).default(7_200),
      })
      .prefault({}),
    /** Answers at least `minBytes` long are compressed (br, else gzip) when the client accepts it. */
    compression: z
      .strictObject({
        enabled: z.boolean().default(true),
        minBytes: z.int().min(0).default(1_024),
      })
      .prefault({}),
  })
  // Node refuses a headers timeout longer than the whole-request timeout
  .refine((server) => server.requestTimeoutMs === 0 || server.headersTimeoutMs <= server.requestTimeoutMs, {
    message: 'expected at most server.requestTimeoutMs',
    path: ['headersTimeoutMs'],
  })
  // a bound below one request's own would refuse that request whatever else runs
  .refine((server) => server.maxBodyBytesInFlight >= server.maxBodyBytes, {
    message: 'expected at least server.maxBodyBytes',
    path: ['maxBodyBytesInFlight'],
  })
  .refine((server) => server.maxAnswerBytesInFlight >= server.maxAnswerBytes, {
    message: 'expected at least server.maxAnswerBytes',
    path: ['maxAnswerBytesInFlight'],
  })
  // a share below one request's own bound would refuse that request whatever else runs; above the
  // process's bound it would be no share
  .refine(
    (server) =>
      isShareOf(server.maxBodyBytesInFlightPerClient, server.maxBodyBytes, server.maxBodyBytesInFlight),
    {
      message: 'expected at least server.maxBodyBytes and at most server.maxBodyBytesInFlight',
      path: ['maxBodyBytesInFlightPerClient'],
    },
  )
  .refine(
    (server) =>
      isShareOf(server.maxAnswerBytesInFlightPerClient, server.maxAnswerBytes, server.maxAnswerBytesInFlight),
    {
      message: 'expected at least server.maxAnswerBytes and at most server.maxAnswerBytesInFlight',
      path: ['maxAnswerBytesInFlightPerClient'],
    },
  )
  .transform((server) => ({
    ...server,
    maxBodyBytesInFlightPerClient:
      server.maxBodyBytesInFlightPerClient ??
      defaultShareOf(server.maxBodyBytesInFlight, server.maxBodyBytes),
    maxAnswerBytesInFlightPerClient:
      server.maxAnswerBytesInFlightPerClient ??
      defaultShareOf(server.maxAnswerBytesInFlight, server.maxAnswerBytes),
  }))
  .prefault({})

/** A share of a bound: at least one request's own bound, at most the whole (unset: the default). */
function isShareOf(shareBytes: number | undefined, requestBytes: number, boundBytes: number): boolean {
  return shareBytes === undefined || (shareBytes >= requestBytes && shareBytes <= boundBytes)
}

/**
 * A key's (and a client address's) default share of a process's bound on bytes in flight: a quarter
 * of it, so that one holds at most a quarter while the others take the rest, but never less than
 * one request's own bound (with the defaults, bodies 8 of 32 MiB; answers 32 of 64 MiB, one answer).
 */
function defaultShareOf(boundBytes: number, requestBytes: number): number {
  return Math.max(Math.floor(boundBytes / 4), requestBytes)
}
