import { TollgateError, unauthorizedCode } from './TollgateError.ts'

// WebSocket: what ends an open connection, sent as a close frame (toCloseFrame), never as an answer.

/** The connection's key was revoked (or can no longer be used: its account's plan has no numbers). */
export class KeyRevokedError extends TollgateError {
  override name = 'KeyRevokedError'
  constructor() {
    super(unauthorizedCode, 401, 'key revoked')
  }
}

/** The JWT the connection was opened with expired (its `exp` passed): the client opens a new one with a new token. */
export class JwtExpiredError extends TollgateError {
  override name = 'JwtExpiredError'
  constructor() {
    super(unauthorizedCode, 401, 'JWT expired')
  }
}

/** A subscription's notification the daily balance cannot pay for. */
export class NotificationUnpaidError extends TollgateError {
  override name = 'NotificationUnpaidError'
  constructor() {
    super(-32005, 402, 'daily credit limit reached; the balance resets at 00:00 UTC')
  }
}

/** More than `websocket.maxBufferedBytes` waiting for a client that reads too slowly. */
export class SlowReaderError extends TollgateError {
  override name = 'SlowReaderError'
  constructor() {
    super(-32005, 429, 'send buffer full: the client reads too slowly')
  }
}

/**
 * The gateway is stopping: a message sent on an open connection is answered with it, and the
 * connection is closed with 1001 (going away) once its calls under way are answered (within
 * `server.shutdownGraceMs`); the client reconnects (to another instance, or to this one restarted).
 */
export class ShuttingDownError extends TollgateError {
  override name = 'ShuttingDownError'
  constructor() {
    super(-32603, 503, 'server restarting, reconnect')
  }
}

/**
 * A reload removed or rebuilt the connection's network: a message sent on the connection from then
 * on is answered with it, and the connection is closed with 1001 once its calls under way are
 * answered (or when the old network stops, at its drain's cap); a new connection gets the new network.
 */
export class NetworkReconfiguredError extends TollgateError {
  override name = 'NetworkReconfiguredError'
  constructor() {
    super(-32603, 503, 'network reconfigured, reconnect')
  }
}
