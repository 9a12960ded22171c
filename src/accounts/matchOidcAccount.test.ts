import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Account } from '../auth/apiKey.ts'
import { OidcAmbiguousAccountError, OidcNoAccountError } from '../errors/oidcErrors.ts'
import { accountNamesOfClaim, matchOidcAccount, maxClaimValues } from './matchOidcAccount.ts'

const account = (id: number, name: string): Account => ({
  id,
  name,
  plan: 'core',
  dailyCredits: null,
  creditsPerSecond: null,
  createdAt: new Date(0),
})
const accounts = new Map([
  ['acme', account(1, 'acme')],
  ['globex', account(2, 'globex')],
])
const findAccount = async (name: string) => accounts.get(name)

describe('accountNamesOfClaim', () => {
  it('a string is one name; a list its strings, each once; anything else none', () => {
    assert.deepEqual(accountNamesOfClaim({ team: 'acme' }, 'team'), ['acme'])
    assert.deepEqual(accountNamesOfClaim({ team: ['acme', 7, null, '', 'acme', 'globex'] }, 'team'), [
      'acme',
      'globex',
    ])
    for (const value of [7, true, null, {}, '', 'x'.repeat(101)])
      assert.deepEqual(accountNamesOfClaim({ team: value }, 'team'), [], JSON.stringify(value))
    assert.deepEqual(accountNamesOfClaim({}, 'team'), [])
  })

  it('a dotted name reaches into objects, unless a claim has the whole name', () => {
    const claims = { realm_access: { roles: ['staff', 'acme'] } }
    assert.deepEqual(accountNamesOfClaim(claims, 'realm_access.roles'), ['staff', 'acme'])
    assert.deepEqual(
      accountNamesOfClaim({ ...claims, 'realm_access.roles': 'globex' }, 'realm_access.roles'),
      ['globex'],
    )
    assert.deepEqual(accountNamesOfClaim({ a: ['x'] }, 'a.length'), [])
    assert.deepEqual(accountNamesOfClaim({}, '__proto__.toString'), [])
  })

  it('a list gives at most maxClaimValues names', () => {
    const many = Array.from({ length: 5_000 }, (_, i) => `group-${i}`)
    assert.equal(accountNamesOfClaim({ groups: many }, 'groups').length, maxClaimValues)
  })
})

describe('matchOidcAccount', () => {
  it('the one name that is an account', async () => {
    assert.equal((await matchOidcAccount(['staff', 'globex'], 'groups', findAccount)).name, 'globex')
  })

  it('no name that is an account: OidcNoAccountError; two: OidcAmbiguousAccountError', async () => {
    await assert.rejects(matchOidcAccount([], 'groups', findAccount), OidcNoAccountError)
    await assert.rejects(matchOidcAccount(['nobody'], 'groups', findAccount), OidcNoAccountError)
    await assert.rejects(
      matchOidcAccount(['acme', 'globex'], 'groups', findAccount),
      OidcAmbiguousAccountError,
    )
  })
})
