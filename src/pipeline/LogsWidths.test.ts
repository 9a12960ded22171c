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
    assert.equal(widths.widthFor(filter(1), 10), 100n)
    widths.learnStated(50n, 20)
    assert.equal(widths.widthFor(filter(2), 20), 50n)
    assert.equal(widths.widthFor(filter(2), 20 + learnedLimitMs), undefined)
  })

  it('a width that worked after a refusal of the range is the network’s; after one of the size, its filter’s, its range aside', () => {
    const widths = LogsWidths.of(network())
    widths.learnWorked(filter(1), 40n, true, 0)
    assert.equal(widths.widthFor({ ...filter(1), fromBlock: '0x99', toBlock: 'latest' }, 1), 40n)
    assert.equal(widths.widthFor(filter(2), 1), undefined)
    widths.learnWorked(filter(3), 60n, false, 1)
    assert.equal(widths.widthFor(filter(2), 2), 60n)
    assert.equal(widths.widthFor(filter(1), 2), 40n, 'the narrower of the two')
  })

  it(`keeps the widths of at most ${maxLearnedFilters} filters: the oldest learned goes first`, () => {
    const widths = LogsWidths.of(network())
    for (let index = 0; index <= maxLearnedFilters; index++) widths.learnWorked(filter(index), 10n, true, 0)
    assert.equal(widths.widthFor(filter(0), 1), undefined)
    assert.equal(widths.widthFor(filter(1), 1), 10n)
    assert.equal(widths.widthFor(filter(maxLearnedFilters), 1), 10n)
  })
})
