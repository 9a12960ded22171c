import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isPrivateAddress, literalAddress, publicOnlyLookup } from './publicAddresses.ts'

/** A webhook URL's host as the sender judges it: its address when it is one. */
const hostOf = (url: string) => literalAddress(new URL(url).hostname)

describe('isPrivateAddress', () => {
  it('refuses loopback, private, link-local, unspecified, multicast and reserved IPv4', () => {
    for (const address of [
      '0.0.0.0',
      '127.0.0.1',
      '10.1.2.3',
      '100.64.0.1',
      '169.254.169.254',
      '172.31.255.255',
      '192.0.0.170',
      '192.168.1.1',
      '198.18.0.1',
      '224.0.0.1',
      '255.255.255.255',
    ])
      assert.equal(isPrivateAddress(address), true, address)
  })

  it('refuses IPv6 loopback, unique local, link-local and multicast, and the IPv4 ones inside IPv6', () => {
    for (const address of [
      '::',
      '::1',
      'fd00::1',
      'fe80::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b::10.0.0.1',
      '64:ff9b:1::1',
      '::7f00:1',
      '2002:a00:1::1',
      '2002:c0a8:101::',
    ])
      assert.equal(isPrivateAddress(address), true, address)
  })

  it('lets public addresses through, in every form', () => {
    for (const address of [
      '8.8.8.8',
      '2001:4860:4860::8888',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '2002:808:808::',
    ])
      assert.equal(isPrivateAddress(address), false, address)
  })

  it('judges a URL host the way the URL parser writes it (hex, decimal and mapped forms included)', () => {
    for (const url of [
      'http://0x7f.1/',
      'http://2130706433/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://[0:0:0:0:0:0:0:1]/',
      'http://0/',
    ]) {
      const address = hostOf(url)
      assert.ok(address !== undefined && isPrivateAddress(address), url)
    }
    assert.equal(hostOf('https://hooks.example.com/x'), undefined)
  })
})

describe('publicOnlyLookup', () => {
  it('fails a name that resolves to a private address', async () => {
    const code = await new Promise((resolve) =>
      publicOnlyLookup('localhost', {}, (err) => resolve((err as NodeJS.ErrnoException | null)?.code)),
    )
    assert.equal(code, 'EPRIVATEADDRESS')
  })
})
