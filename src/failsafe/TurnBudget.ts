/**
 * Work shared out between turns of the event loop: whoever takes more than `bytesPerTurn` of it
 * since the budget was last renewed waits (its `resume` is called) until a later turn, after the
 * other work found waiting (other clients' requests among it), when the budget is renewed. One
 * budget for everything that takes from it, so that many large streams at once hold the loop no
 * longer than one would. Cheap when nothing waits: a sum and a comparison.
 */
export class TurnBudget {
  #takenBytes = 0
  #waiting: (() => void)[] = []

  constructor(
    private readonly bytesPerTurn: number,
    /** How a later turn is awaited: setImmediate (after the I/O already waiting), or a test's own. */
    private readonly nextTurn: (callback: () => void) => void = setImmediate,
  ) {}

  /**
   * Takes `bytes` of work just done: true while this turn's budget lasts; else false, and `resume`
   * is called on a later turn, once the budget is renewed.
   */
  take(bytes: number, resume: () => void): boolean {
    this.#takenBytes += bytes
    if (this.#takenBytes <= this.bytesPerTurn) return true
    if (this.#waiting.push(resume) === 1) this.nextTurn(() => this.#renew())
    return false
  }

  /** A new turn's budget; those that waited go on (and may take it all again, and wait again). */
  #renew(): void {
    this.#takenBytes = 0
    const waiting = this.#waiting
    this.#waiting = []
    for (const resume of waiting) resume()
  }
}
