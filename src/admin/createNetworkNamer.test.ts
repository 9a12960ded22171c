import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Network } from '../networks/createNetwork.ts'
import { createNetworkRegistry } from '../networks/createNetworkRegistry.ts'
import { createNetworkNamer } from './createNetworkNamer.ts'

const network = (name: string, hosts: string[] = []) => ({ name, hosts }) as unknown as Network

describe('createNetworkNamer', () => {
  it("names the registry's network by path, then Host; (none) when there is none; the same when asked again", () => {
    const name = createNetworkNamer(
      createNetworkRegistry([network('mainnet', ['rpc.example.com']), network('base')], undefined),
    )
    for (let round = 0; round < 2; round++) {
      assert.equal(name('base', 'rpc.example.com'), 'base')
      assert.equal(name('nope', undefined), '(none)')
      assert.equal(name(undefined, 'rpc.example.com:8545'), 'mainnet')
      assert.equal(name(undefined, 'base.example.org'), 'base')
      assert.equal(name(undefined, '127.0.0.1:8545'), '(none)')
      assert.equal(name(undefined, undefined), '(none)')
    }
  })

  it('a path name and a Host of the same text are told apart', () => {
    const name = createNetworkNamer(createNetworkRegistry([network('mainnet', ['base'])], undefined))
    assert.equal(name(undefined, 'base'), 'mainnet')
    assert.equal(name('base', undefined), '(none)')
  })
})
