import type { Buffer } from 'node:buffer'

// How a call ended inside the gateway, thrown between layers and never answered as they are: not
// TollgateErrors, so neither has a wire form (docs/errors.md lists only what a client can get).
// Whoever catches one decides what the client gets, if anything.

/** The client went away: its call stops, and it is not an upstream's failure. */
export class ClientGoneError extends Error {
  override name = 'ClientGoneError'
  constructor() {
    super('the client went away')
  }
}

/**
 * Every member answered an error saying it cannot answer this now (docs/compatibility.md §7), and
 * partners follow (`fallback`): `answer` is the last one, for the client if the partners fail too.
 */
export class NodeErrorAnswer extends Error {
  override name = 'NodeErrorAnswer'
  constructor(
    readonly answer: Buffer,
    readonly logDetails: string,
  ) {
    super('every upstream answered an error it may not have for another node')
  }
}
