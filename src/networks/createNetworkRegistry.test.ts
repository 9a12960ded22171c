import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Network } from './createNetwork.ts'
import { createNetworkRegistry } from './createNetworkRegistry.ts'

const network = (name: string, hosts: string[] = []) => ({ name, hosts }) as unknown as Network

describe('createNetworkRegistry', () => {
  it('resolves by path name, then by Host (a configured host, or the name as first label), else the only one', () => {
    const mainnet = network('mainnet', ['rpc.example.com'])
    const base = network('base')
    const registry = createNetworkRegistry([mainnet, base])
    assert.equal(registry.resolve('base', 'rpc.example.com'), base)
    assert.equal(registry.resolve('nope', 'rpc.example.com'), undefined)
    assert.equal(registry.resolve(undefined, 'RPC.example.com:8545'), mainnet)
    assert.equal(registry.resolve(undefined, 'base.gateway.example'), base)
    assert.equal(registry.resolve(undefined, 'localhost:8545'), undefined)
    assert.equal(registry.resolve(undefined, undefined), undefined)

    const only = createNetworkRegistry([mainnet])
    assert.equal(only.resolve(undefined, 'localhost:8545'), mainnet)
    assert.equal(only.resolve(undefined, undefined), mainnet)
  })

  it('answers the same for a Host asked again, and for another after it (the last one is kept)', () => {
    const mainnet = network('mainnet', ['rpc.example.com'])
    const base = network('base')
    const registry = createNetworkRegistry([mainnet, base])
    for (const [host, expected] of [
      ['rpc.example.com', mainnet],
      ['rpc.example.com', mainnet],
      ['base.example', base],
      ['base.example', base],
      ['unknown.example', undefined],
      ['rpc.example.com', mainnet],
    ] as const) {
      assert.equal(registry.resolve(undefined, host), expected, host)
    }
  })

  it('replace: new requests resolve to the new networks, a Host remembered before included', () => {
    const old = network('mainnet', ['rpc.example.com'])
    const registry = createNetworkRegistry([old])
    assert.equal(registry.resolve(undefined, 'rpc.example.com'), old)
    const rebuilt = network('mainnet', ['rpc.example.com'])
    const added = network('base')
    registry.replace([rebuilt, added])
    assert.deepEqual(registry.all, [rebuilt, added])
    assert.equal(registry.resolve(undefined, 'rpc.example.com'), rebuilt)
    assert.equal(registry.resolve('base', undefined), added)
    assert.equal(registry.resolve(undefined, undefined), undefined, 'no longer the only one')
  })
})
