import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { TurnBudget } from './TurnBudget.ts'

/** A budget whose turns the test starts itself: the callbacks it asked to run on the next turn. */
function budgetOf(bytesPerTurn: number) {
  const turns: (() => void)[] = []
  const budget = new TurnBudget(bytesPerTurn, (callback) => turns.push(callback))
  const nextTurn = () => {
    for (const callback of turns.splice(0)) callback()
  }
  return { budget, turns, nextTurn }
}

describe('TurnBudget', () => {
  it('lets work go on while a turn has budget left, without waiting for a turn', () => {
    const { budget, turns } = budgetOf(100)
    const resumed: string[] = []
    assert.equal(
      budget.take(60, () => resumed.push('a')),
      true,
    )
    assert.equal(
      budget.take(40, () => resumed.push('b')),
      true,
    )
    assert.equal(turns.length, 0)
    assert.equal(resumed.length, 0)
  })

  it('past its budget, each taker waits for the next turn, which renews the budget once for all', () => {
    const { budget, turns, nextTurn } = budgetOf(100)
    const resumed: string[] = []
    assert.equal(
      budget.take(90, () => resumed.push('a')),
      true,
    )
    assert.equal(
      budget.take(20, () => resumed.push('b')),
      false,
    )
    assert.equal(
      budget.take(5, () => resumed.push('c')),
      false,
    )
    assert.equal(turns.length, 1, 'one renewal for every taker waiting')
    assert.equal(resumed.length, 0)
    nextTurn()
    assert.deepEqual(resumed, ['b', 'c'])
    // renewed: the whole budget again
    assert.equal(
      budget.take(100, () => resumed.push('d')),
      true,
    )
    assert.equal(
      budget.take(1, () => resumed.push('e')),
      false,
    )
    nextTurn()
    assert.deepEqual(resumed, ['b', 'c', 'e'])
  })

  it('a taker resumed on a new turn may take the budget again and wait once more', () => {
    const { budget, turns, nextTurn } = budgetOf(100)
    let chunks = 5
    const read = (): void => {
      // a stream of 80-byte chunks, paused whenever the budget says so
      while (chunks > 0) {
        chunks--
        if (!budget.take(80, read)) return
      }
    }
    read()
    const perTurn: number[] = [5 - chunks]
    while (turns.length > 0) {
      const before = chunks
      nextTurn()
      perTurn.push(before - chunks)
    }
    assert.equal(chunks, 0)
    assert.deepEqual(perTurn, [2, 2, 1])
  })
})
