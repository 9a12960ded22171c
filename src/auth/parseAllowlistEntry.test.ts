import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AllowlistEntryError } from '../errors/adminErrors.ts'
import { getOfferedMethods } from '../methods/methodTable.ts'
import { parseAllowlistEntry } from './parseAllowlistEntry.ts'

describe('parseAllowlistEntry', () => {
  it('methods: every method the gateway offers, and nothing else', () => {
    for (const method of getOfferedMethods())
      assert.equal(parseAllowlistEntry('methods', ` ${method} `), method)
    for (const entry of ['not_a_method', 'eth_notAMethod', 'eth_*', '*', 'eth_', '']) {
      assert.throws(
        () => parseAllowlistEntry('methods', entry),
        (err: Error) => {
          assert.ok(err instanceof AllowlistEntryError)
          assert.equal(err.message, `'${entry}' is not a method tollgate offers`)
          return true
        },
      )
    }
  })

  it('methods: a name in the wrong case names the method it differs from', () => {
    assert.throws(
      () => parseAllowlistEntry('methods', 'ETH_GETBALANCE'),
      /^AllowlistEntryError: 'ETH_GETBALANCE' is not a method tollgate offers \(names are case-sensitive: eth_getBalance\)$/,
    )
  })

  it('contracts, origins and user agents keep their stored forms', () => {
    const address = '0x00000000000000000000000000000000000000aB'
    assert.equal(parseAllowlistEntry('contracts', address), address.toLowerCase())
    assert.throws(() => parseAllowlistEntry('contracts', '0x1234'), /not a 20-byte 0x address/)
    assert.equal(parseAllowlistEntry('origins', 'https://App.Example.com/'), 'https://app.example.com')
    assert.equal(parseAllowlistEntry('origins', '*.example.com'), '*.example.com')
    assert.throws(() => parseAllowlistEntry('origins', 'not an origin'), /is not an origin/)
    assert.equal(parseAllowlistEntry('userAgents', ' MyWallet/1.0 '), 'MyWallet/1.0')
    assert.throws(() => parseAllowlistEntry('userAgents', '  '), /cannot be empty/)
  })
})
