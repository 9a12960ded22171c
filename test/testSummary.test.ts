import assert from 'node:assert/strict'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { pathToFileURL } from 'node:url'

type Event = { type: string; data: Record<string, unknown> }
// the runner's reporter (a script, without types)
const { default: testSummary }: { default: (events: AsyncIterable<Event>) => AsyncIterable<string> } =
  await import(pathToFileURL(join(import.meta.dirname, '..', 'scripts', 'testSummary.js')).href)

const file = resolve(import.meta.dirname, 'example.test.ts')

/** What the reporter prints for `events` (no file is timed: it keeps no times). */
async function summaryOf(events: Event[]): Promise<string> {
  let printed = ''
  for await (const text of testSummary(
    (async function* () {
      yield* events
    })(),
  ))
    printed += text
  return printed
}

const failed = (name: string, todo?: string) => ({
  type: 'test:fail',
  data: {
    name,
    file,
    line: 3,
    nesting: 1,
    todo,
    details: { duration_ms: 1, error: new Error(`${name} broke`) },
  },
})

describe('the test run summary', () => {
  it('lists a failed test with its file, and a todo that still fails apart from the failures', async () => {
    const printed = await summaryOf([
      failed('a real failure'),
      failed('a known gap', 'to be built'),
      { type: 'test:diagnostic', data: { nesting: 0, message: 'fail 1' } },
      { type: 'test:diagnostic', data: { nesting: 0, message: 'todo 1' } },
    ])
    assert.match(
      printed,
      /\ntodo, still failing \(1\):\n {2}test\/example\.test\.ts:3 › a known gap: a known gap broke\n/,
    )
    assert.match(
      printed,
      /\nfailed \(1\):\n {2}test\/example\.test\.ts:3 › a real failure: a real failure broke\n/,
    )
    assert.match(printed, /\nfail 1, todo 1; 0\.0 s\n/)
  })

  it('has no failed list when only a todo fails', async () => {
    const printed = await summaryOf([failed('a known gap', 'to be built')])
    assert.doesNotMatch(printed, /failed \(/)
    assert.match(printed, /todo, still failing \(1\)/)
  })
})
