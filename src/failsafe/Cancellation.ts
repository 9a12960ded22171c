/**
 * A cheap, one-shot "the caller went away" flag with listeners. The request path makes one per
 * request; AbortController/AbortSignal cost several times more and are not needed there. A request
 * has one listener at a time but for hedges: the first has a slot of its own, the others a set.
 */
export class Cancellation {
  cancelled = false
  #first: (() => void) | undefined
  #more: Set<() => void> | undefined

  /** Calls `listener` on cancel (at once if already cancelled); returns a function that unsubscribes. */
  onCancel(listener: () => void): () => void {
    if (this.cancelled) {
      listener()
      return noop
    }
    if (this.#first === undefined) {
      this.#first = listener
      return () => {
        if (this.#first === listener) this.#first = undefined
      }
    }
    this.#more ??= new Set()
    this.#more.add(listener)
    return () => this.#more?.delete(listener)
  }

  cancel(): void {
    if (this.cancelled) return
    this.cancelled = true
    const first = this.#first
    const more = this.#more
    this.#first = undefined
    this.#more = undefined
    first?.()
    if (more) for (const listener of more) listener()
  }
}

function noop(): void {}
