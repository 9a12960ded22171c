import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Network } from './createNetwork.ts'
import { createNetworkRegistry } from './createNetworkRegistry.ts'

const network = (name: string, hosts: string[] = []) => ({ name, hosts }) as unknown as Network

describe('createNetworkRegistry', () => {
  it('resolves by path name, then by Host (a configured host, or the name as first label), else the default one', () => {
    const mainnet = network('mainnet', ['rpc.example.com'])
    const base = network('base')
    const registry = createNetworkRegistry([mainnet, base], undefined)
    assert.equal(registry.resolve('base', 'rpc.example.com'), base)
    assert.equal(registry.resolve('nope', 'rpc.example.com'), undefined)
    assert.equal(registry.resolve(undefined, 'RPC.example.com:8545'), mainnet)
    assert.equal(registry.resolve(undefined, 'base.gateway.example'), base)
    assert.equal(registry.resolve(undefined, 'localhost:8545'), undefined, 'no default: none')
    assert.equal(registry.resolve(undefined, undefined), undefined)

    const withDefault = createNetworkRegistry([mainnet, base], 'base')
    assert.equal(withDefault.resolve(undefined, 'localhost:8545'), base)
    assert.equal(withDefault.resolve(undefined, undefined), base)
    assert.equal(withDefault.resolve(undefined, 'rpc.example.com'), mainnet, 'a Host a network claims wins')
    assert.equal(
      withDefault.resolve('nope', undefined),
      undefined,
      'a prefix naming no network is not the default',
    )
  })

  it('answers the same for a Host asked again, and for another after it (the last one is kept)', () => {
    const mainnet = network('mainnet', ['rpc.example.com'])
    const base = network('base')
    const registry = createNetworkRegistry([mainnet, base], undefined)
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

  it('replace: new requests resolve to the new networks, a Host remembered before and the default included', () => {
    const old = network('mainnet', ['rpc.example.com'])
    const registry = createNetworkRegistry([old], 'mainnet')
    assert.equal(registry.resolve(undefined, 'rpc.example.com'), old)
    assert.equal(registry.resolve(undefined, 'localhost'), old)
    const rebuilt = network('mainnet', ['rpc.example.com'])
    const added = network('base')
    registry.replace([added, rebuilt], 'mainnet')
    assert.deepEqual(registry.all, [added, rebuilt])
    assert.equal(registry.resolve(undefined, 'rpc.example.com'), rebuilt)
    assert.equal(registry.resolve('base', undefined), added)
    assert.equal(registry.resolve(undefined, undefined), rebuilt, 'the default is named, not the first')
    assert.equal(registry.resolve(undefined, 'localhost'), rebuilt, 'a Host remembered before too')
    registry.replace([added], 'base')
    assert.equal(registry.resolve(undefined, 'localhost'), added)
    registry.replace([added], undefined)
    assert.equal(registry.resolve(undefined, 'localhost'), undefined)
  })
})
