import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Network } from '../networks/createNetwork.ts'
import { LogsWidths, learnedLimitMs, maxLearnedFilters } from './LogsWidths.ts'

const network = () => ({}) as Network
const filter = (index: number) => ({ address: `0x${index.toString(16).padStart(40, '0')}`, fromBlock: '0x1' })

describe('LogsWidths', () => {
  it('a stated limit holds for every filter, the narrowest first; a wider one waits until it expires', () => {
    const widths = LogsWidths.of(network())
    widths.learnStated(100n, 0)
    widths.learnStated(500n, 10)
    assert.deepEqual(widths.knownFor(filter(1), 10), { refused: 101n, answered: 100n })
    widths.learnStated(50n, 20)
    assert.deepEqual(widths.knownFor(filter(2), 20), { refused: 51n, answered: 50n })
    assert.deepEqual(widths.knownFor(filter(2), 20 + learnedLimitMs), {
      refused: undefined,
      answered: undefined,
    })
  })

  it('a range refusal is the network’s; an answer-size refusal its filter’s, its range aside', () => {
    const widths = LogsWidths.of(network())
    widths.learnRefused(filter(1), 80n, true, 0)
    widths.learnAnswered(filter(1), 40n, 0)
    assert.deepEqual(widths.knownFor({ ...filter(1), fromBlock: '0x99', toBlock: 'latest' }, 1), {
      refused: 80n,
      answered: 40n,
    })
    assert.deepEqual(widths.knownFor(filter(2), 1), { refused: undefined, answered: undefined })
    widths.learnRefused(filter(3), 120n, false, 1)
    widths.learnAnswered(filter(3), 60n, 1)
    assert.deepEqual(widths.knownFor(filter(2), 2), { refused: 120n, answered: 60n })
    assert.deepEqual(
      widths.knownFor(filter(1), 2),
      { refused: 80n, answered: 40n },
      'the narrower of the two',
    )
  })

  it('one query refused wider than others were answered narrows nothing for them: the bounds are the narrowest refused and the widest answered below it', () => {
    const widths = LogsWidths.of(network())
    // a 101-block query refused (besu: no width stated), its halves of 50 and 51 answered
    widths.learnRefused(filter(1), 101n, false, 0)
    widths.learnAnswered(filter(1), 51n, 0)
    assert.deepEqual(widths.knownFor(filter(2), 1), { refused: 101n, answered: 51n })
    // another key's 100-block query, under 101, is asked whole and answered: the bound widens
    widths.learnAnswered(filter(2), 100n, 2)
    assert.deepEqual(widths.knownFor(filter(3), 3), { refused: 101n, answered: 100n })
    widths.learnAnswered(filter(2), 60n, 4)
    assert.equal(widths.knownFor(filter(3), 5).answered, 100n, 'a narrower answer narrows nothing')
    widths.learnAnswered(filter(2), 101n, 6)
    assert.equal(widths.knownFor(filter(3), 7).answered, 100n, 'never up to a width refused')
    widths.learnRefused(filter(2), 200n, false, 8)
    assert.equal(widths.knownFor(filter(3), 9).refused, 101n, 'a wider refusal narrows nothing')
    widths.learnRefused(filter(2), 90n, false, 10)
    assert.deepEqual(
      widths.knownFor(filter(3), 11),
      { refused: 90n, answered: undefined },
      'a refusal narrower than the width answered: the upstreams changed, that width is forgotten',
    )
  })

  it('a width answered counts only while a wider refusal holds: alone it splits nothing', () => {
    const widths = LogsWidths.of(network())
    widths.learnAnswered(filter(1), 500n, 0)
    assert.deepEqual(widths.knownFor(filter(1), 1), { refused: undefined, answered: undefined })
    widths.learnRefused(filter(1), 300n, false, 0)
    widths.learnAnswered(filter(1), 200n, 0)
    assert.deepEqual(widths.knownFor(filter(1), learnedLimitMs), { refused: undefined, answered: undefined })
  })

  it('a width answered for one kind of refusal is no width for a query the other kind refused narrower', () => {
    const widths = LogsWidths.of(network())
    widths.learnRefused(filter(1), 1000n, false, 0)
    widths.learnAnswered(filter(2), 500n, 0)
    widths.learnRefused(filter(1), 100n, true, 0)
    assert.deepEqual(widths.knownFor(filter(1), 1), { refused: 100n, answered: undefined })
    assert.deepEqual(widths.knownFor(filter(2), 1), { refused: 1000n, answered: 500n })
  })

  it(`keeps the widths of at most ${maxLearnedFilters} filters: the oldest learned goes first`, () => {
    const widths = LogsWidths.of(network())
    for (let index = 0; index <= maxLearnedFilters; index++) widths.learnRefused(filter(index), 10n, true, 0)
    assert.equal(widths.knownFor(filter(0), 1).refused, undefined)
    assert.equal(widths.knownFor(filter(1), 1).refused, 10n)
    assert.equal(widths.knownFor(filter(maxLearnedFilters), 1).refused, 10n)
  })
})
