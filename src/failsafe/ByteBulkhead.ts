/**
 * A bound on bytes held at once by many holders (request bodies being read, answers on their way
 * out). Each holder's first `freeBytes` are taken from no one, so small messages always go; beyond
 * them a holder takes from the bound before it keeps bytes, and gives them back when it lets go.
 */
export class ByteBulkhead {
  inUseBytes = 0

  constructor(
    readonly maxBytes: number,
    readonly freeBytes = 0,
  ) {}

  /** A new holder's share of the bound: empty until it takes. */
  holder(): ByteHolder {
    return new ByteHolder(this)
  }
}

/** What one holder (a request, a message) holds of a ByteBulkhead. */
export class ByteHolder {
  #heldBytes = 0
  /** What it holds of the bound: its bytes past the bulkhead's free ones. */
  #boundBytes = 0

  constructor(private readonly bulkhead: ByteBulkhead) {}

  /** Takes `bytes` if the bound has room for them; false (nothing taken) if it has not. */
  take(bytes: number): boolean {
    const held = this.#heldBytes + bytes
    const bound = Math.max(0, held - this.bulkhead.freeBytes)
    const more = bound - this.#boundBytes
    if (more > 0) {
      if (this.bulkhead.inUseBytes + more > this.bulkhead.maxBytes) return false
      this.bulkhead.inUseBytes += more
    }
    this.#heldBytes = held
    this.#boundBytes = bound
    return true
  }

  /** Bytes it no longer holds (a dropped answer). */
  giveBack(bytes: number): void {
    this.#heldBytes = Math.max(0, this.#heldBytes - bytes)
    const bound = Math.max(0, this.#heldBytes - this.bulkhead.freeBytes)
    this.bulkhead.inUseBytes -= this.#boundBytes - bound
    this.#boundBytes = bound
  }

  /** Everything it holds, let go (call once; a second call gives back nothing). */
  release(): void {
    this.giveBack(this.#heldBytes)
  }
}
