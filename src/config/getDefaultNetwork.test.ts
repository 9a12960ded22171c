import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { configSchema } from './configSchema.ts'
import { getDefaultNetwork } from './getDefaultNetwork.ts'

const network = (name: string) => ({ name, chainId: 1, upstreams: [{ url: `http://${name}.example` }] })
const defaultOf = (raw: Record<string, unknown>) => getDefaultNetwork(configSchema.parse(raw))

describe('getDefaultNetwork', () => {
  it('defaultNetwork when set; false is none', () => {
    assert.equal(defaultOf({ defaultNetwork: 'b', networks: [network('a'), network('b')] }), 'b')
    assert.equal(defaultOf({ defaultNetwork: false, networks: [network('a')] }), undefined)
  })

  it('unset: the embedded devnet when it runs, else the first network listed', () => {
    assert.equal(defaultOf({ networks: [network('a'), network('b')] }), 'a')
    assert.equal(defaultOf({ networks: [network('a')] }), 'a')
    assert.equal(defaultOf({ devnet: {}, networks: [network('a')] }), 'devnet')
    assert.equal(defaultOf({ devnet: {} }), 'devnet')
  })

  it('adding a network after the first, or beside the devnet, keeps it', () => {
    assert.equal(defaultOf({ networks: [network('a'), network('b'), network('c')] }), 'a')
    assert.equal(defaultOf({ devnet: {}, networks: [network('c'), network('a')] }), 'devnet')
  })
})
