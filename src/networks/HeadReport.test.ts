import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type HeadReport, maxReportChars, parseHeadReport, toHeadReportText } from './HeadReport.ts'
import { toMemberKeys } from './toMemberKeys.ts'

const hash = (byte: string) => `0x${byte.repeat(32)}`
const report: HeadReport = {
  header: { number: '0x10', hash: hash('ab'), parentHash: hash('cd'), gasLimit: '0x1c9c380', miner: '0x00' },
  goesBack: true,
  finalized: 8n,
  genesis: hash('9e'),
  gasLimit: 30_000_000n,
  members: new Map([
    ['node-a', 16n],
    ['#x1', 15n],
  ]),
}

describe('HeadReport', () => {
  it('goes through its text unchanged (the header as the tracker gave it, field for field)', () => {
    assert.deepEqual(parseHeadReport(toHeadReportText(report)), report)
    const bare = {
      ...report,
      finalized: undefined,
      genesis: undefined,
      gasLimit: undefined,
      members: new Map(),
    }
    assert.deepEqual(parseHeadReport(toHeadReportText(bare)), bare)
  })

  it('refuses what another process should never have sent, by throwing', () => {
    const text = toHeadReportText(report)
    const raw = JSON.parse(text) as Record<string, unknown>
    const broken: unknown[] = [
      null,
      7,
      [],
      { ...raw, header: null },
      { ...raw, header: { ...(raw.header as object), number: '16' } },
      { ...raw, header: { ...(raw.header as object), hash: '0xab' } },
      { ...raw, header: { ...(raw.header as object), parentHash: undefined } },
      { ...raw, goesBack: 'no' },
      { ...raw, members: [] },
      { ...raw, members: { a: 16 } },
      { ...raw, finalized: 'x' },
      { ...raw, genesis: '0x01' },
      { ...raw, gasLimit: -1 },
      {
        ...raw,
        members: Object.fromEntries(Array.from({ length: 257 }, (_, index) => [`m${index}`, '0x1'])),
      },
    ]
    for (const each of broken)
      assert.throws(() => parseHeadReport(JSON.stringify(each)), JSON.stringify(each))
    assert.throws(() => parseHeadReport('{'))
    assert.throws(() => parseHeadReport(' '.repeat(maxReportChars + 1)), /too long/)
  })
})

describe('toMemberKeys', () => {
  it('the configured name, else a hash of the URL that does not show it; each key once', () => {
    const keys = toMemberKeys([
      { url: 'https://node.example/v2/secret-key', name: 'alchemy' },
      { url: 'https://node.example/v2/secret-key' },
      { url: 'https://other.example/' },
      { url: 'https://third.example/', name: 'alchemy' },
    ])
    assert.equal(keys[0], 'alchemy')
    assert.match(keys[1] as string, /^#[\w-]{16}$/)
    assert.ok(!(keys[1] as string).includes('secret'))
    assert.notEqual(keys[1], keys[2])
    assert.equal(keys[3], 'alchemy~3')
    // the same URL gives the same key in every instance
    assert.deepEqual(toMemberKeys([{ url: 'https://other.example/' }]), [keys[2]])
  })
})
