import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import * as errors from './errors.ts'
import { toJsonRpcError } from './toJsonRpcError.ts'

type ErrorClass = new (...args: never[]) => errors.TollgateError

const classes = (Object.entries(errors) as [string, unknown][]).filter(
  (entry): entry is [string, ErrorClass] =>
    typeof entry[1] === 'function' && entry[1].prototype instanceof errors.TollgateError,
)

/** docs/errors.md's table rows: name → [HTTP, code]. */
function documentedErrors(): Map<string, [number, number]> {
  const rows = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8')
    .split('\n')
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .filter((cells) => /^[A-Z]\w+Error$/.test(cells[1] ?? ''))
  return new Map(rows.map((cells) => [cells[1] as string, [Number(cells[2]), Number(cells[3])]]))
}

describe('errors and docs/errors.md', () => {
  it('every error class is documented with its HTTP status and code, and every documented one exists', () => {
    const documented = documentedErrors()
    for (const [name, ErrorClass] of classes) {
      const instance = new ErrorClass(...([5] as never[]))
      assert.deepEqual(documented.get(name), [instance.httpStatus, instance.code], name)
    }
    assert.deepEqual([...documented.keys()].sort(), classes.map(([name]) => name).sort())
  })

  it('toJsonRpcError: known errors keep their code and status; anything else is a 500 without details', () => {
    assert.deepEqual(toJsonRpcError(new errors.InvalidParamsError('invalid argument 0: nope')), {
      httpStatus: 200,
      error: { code: -32602, message: 'invalid argument 0: nope' },
    })
    assert.deepEqual(toJsonRpcError(new Error('ECONNREFUSED http://user:secret@10.0.0.1')), {
      httpStatus: 500,
      error: { code: -32603, message: 'internal error' },
    })
  })
})
