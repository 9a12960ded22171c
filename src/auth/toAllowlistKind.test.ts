import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { allowlistKinds } from './allowlistKind.ts'
import { allowlistKindList, allowlistKindNames, toAllowlistKind } from './toAllowlistKind.ts'

describe('toAllowlistKind', () => {
  it('each kind by its name and by its settings field name', () => {
    for (const kind of allowlistKinds) {
      assert.equal(toAllowlistKind(allowlistKindNames[kind]), kind)
      assert.equal(toAllowlistKind(kind), kind)
    }
    assert.equal(toAllowlistKind('user-agents'), 'userAgents')
    assert.equal(toAllowlistKind('userAgents'), 'userAgents')
  })

  it('no other word, and the list shows one name per kind', () => {
    for (const word of ['user_agents', 'useragents', 'Methods', 'contract-addresses', '', 'constructor'])
      assert.equal(toAllowlistKind(word), undefined, word)
    assert.equal(allowlistKindList, 'contracts, user-agents, origins, methods')
  })
})
