/**
 * A bound on bytes held at once by many holders (request bodies being read, answers on their way
 * out): a holder takes bytes before it keeps them and gives them back when it lets them go.
 */
export class ByteBulkhead {
  inUseBytes = 0

  constructor(readonly maxBytes: number) {}

  /** Takes `bytes` if they fit; false (nothing taken) if they would pass `maxBytes`. */
  tryTake(bytes: number): boolean {
    if (this.inUseBytes + bytes > this.maxBytes) return false
    this.inUseBytes += bytes
    return true
  }

  giveBack(bytes: number): void {
    this.inUseBytes -= bytes
  }
}
