/**
 * A cheap, one-shot "the caller went away" flag with listeners. The request path makes one per
 * request; AbortController/AbortSignal cost several times more and are not needed there.
 */
export class Cancellation {
  cancelled = false
  #listeners: Set<() => void> | undefined

  /** Calls `listener` on cancel (at once if already cancelled); returns a function that unsubscribes. */
  onCancel(listener: () => void): () => void {
    if (this.cancelled) {
      listener()
      return noop
    }
    this.#listeners ??= new Set()
    this.#listeners.add(listener)
    return () => this.#listeners?.delete(listener)
  }

  cancel(): void {
    if (this.cancelled) return
    this.cancelled = true
    const listeners = this.#listeners
    this.#listeners = undefined
    if (listeners) for (const listener of listeners) listener()
  }
}

function noop(): void {}
