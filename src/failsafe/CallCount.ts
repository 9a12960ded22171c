/**
 * The calls under way on something that may be stopped (a network a reload replaced): it stops
 * once they are done. A plain counter: entering and leaving are on every request's path.
 */
export class CallCount {
  /** Calls under way now. */
  size = 0
  #waiting: (() => void)[] = []

  enter(): void {
    this.size++
  }

  leave(): void {
    this.size--
    if (this.size === 0 && this.#waiting.length > 0) for (const done of this.#waiting.splice(0)) done()
  }

  /** Settles once no call is under way: at once when none is. */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve()
    return new Promise((resolve) => this.#waiting.push(resolve))
  }
}
