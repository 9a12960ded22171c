/**
 * A bound on bytes held at once by many holders (request bodies being read, answers on their way
 * out). Each holder's first `freeBytes` are taken from no one, so small messages always go; beyond
 * them a holder takes from the bound before it keeps bytes, and gives them back when it lets go.
 * A holder may belong to shares (its key, its client address): the holders of one share together
 * hold at most `shareBytes` of the bound, so that one of them cannot take all of it from the others.
 */
export class ByteBulkhead {
  inUseBytes = 0
  /** What each share's holders hold of the bound now; a share holding nothing has no entry. */
  readonly #sharesBytes = new Map<string, number>()

  constructor(
    readonly maxBytes: number,
    readonly freeBytes = 0,
    readonly shareBytes = maxBytes,
  ) {}

  /** A new holder's share of the bound: empty until it takes; counted in each of `shares` too. */
  holder(shares: readonly string[] = []): ByteHolder {
    return new ByteHolder(this, shares)
  }

  /** What the holders of `share` hold of the bound now. */
  heldBy(share: string): number {
    return this.#sharesBytes.get(share) ?? 0
  }

  /** For ByteHolder: takes `bytes` if the bound and each of `shares` have room for them. */
  tryTake(bytes: number, shares: readonly string[]): boolean {
    if (this.inUseBytes + bytes > this.maxBytes) return false
    for (const share of shares) {
      if (this.heldBy(share) + bytes > this.shareBytes) return false
    }
    this.inUseBytes += bytes
    for (const share of shares) this.#sharesBytes.set(share, this.heldBy(share) + bytes)
    return true
  }

  /** For ByteHolder: `bytes` no longer held, by the bound and by each of `shares`. */
  giveBack(bytes: number, shares: readonly string[]): void {
    this.inUseBytes -= bytes
    for (const share of shares) {
      const left = this.heldBy(share) - bytes
      if (left > 0) this.#sharesBytes.set(share, left)
      else this.#sharesBytes.delete(share)
    }
  }
}

/** What one holder (a request, a message) holds of a ByteBulkhead. */
export class ByteHolder {
  #heldBytes = 0
  /** What it holds of the bound: its bytes past the bulkhead's free ones. */
  #boundBytes = 0

  constructor(
    private readonly bulkhead: ByteBulkhead,
    private readonly shares: readonly string[],
  ) {}

  /** Whether it holds any of the bound (it is past its free bytes). */
  get holdsBound(): boolean {
    return this.#boundBytes > 0
  }

  /** Takes `bytes` if the bound and its shares have room for them; false (nothing taken) if not. */
  take(bytes: number): boolean {
    const held = this.#heldBytes + bytes
    const bound = Math.max(0, held - this.bulkhead.freeBytes)
    const more = bound - this.#boundBytes
    if (more > 0 && !this.bulkhead.tryTake(more, this.shares)) return false
    this.#heldBytes = held
    this.#boundBytes = bound
    return true
  }

  /** Bytes it no longer holds (a dropped answer). */
  giveBack(bytes: number): void {
    this.#heldBytes = Math.max(0, this.#heldBytes - bytes)
    const bound = Math.max(0, this.#heldBytes - this.bulkhead.freeBytes)
    if (bound < this.#boundBytes) this.bulkhead.giveBack(this.#boundBytes - bound, this.shares)
    this.#boundBytes = bound
  }

  /** Everything it holds, let go (call once; a second call gives back nothing). */
  release(): void {
    this.giveBack(this.#heldBytes)
  }
}
