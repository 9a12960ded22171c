import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KeyAdminError } from '../errors/adminErrors.ts'
import { parseName } from './parseName.ts'

describe('parseName', () => {
  it('takes names up to 100 characters, counted as characters (not UTF-16 units)', () => {
    assert.equal(parseName('the key name', ''), '')
    assert.equal(parseName('the key name', 'a'.repeat(100)), 'a'.repeat(100))
    assert.equal(parseName('the key name', '🔑'.repeat(100)), '🔑'.repeat(100))
    assert.equal(parseName('the key name', 'frontend (prod) – שלום 東京'), 'frontend (prod) – שלום 東京')
  })

  it('refuses longer names, saying the limit', () => {
    assert.throws(
      () => parseName('the key name', 'x'.repeat(900 * 1024)),
      new KeyAdminError('the key name is too long: at most 100 characters, got 921600'),
    )
    assert.throws(() => parseName('the account name', 'a'.repeat(101)), /at most 100 characters, got 101/)
  })

  it('refuses every bidirectional formatting character and control character, naming it and where', () => {
    const bidi = [
      0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c,
    ]
    for (const code of bidi) {
      const hex = code.toString(16).toUpperCase().padStart(4, '0')
      assert.throws(
        () => parseName('the key name', `ab${String.fromCodePoint(code)}gpj.exe`),
        new KeyAdminError(
          `the key name may not contain U+${hex} (a bidirectional formatting character), found at character 3`,
        ),
      )
    }
    for (const code of [0x00, 0x09, 0x0a, 0x0d, 0x1b, 0x7f, 0x85, 0x9f, 0x2028, 0x2029]) {
      assert.throws(
        () => parseName('the account name', `x${String.fromCodePoint(code)}`),
        (err: Error) =>
          err instanceof KeyAdminError && /\(a control character\), found at character 2$/.test(err.message),
        code.toString(16),
      )
    }
  })
})
