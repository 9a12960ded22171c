import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseRoute } from './parseRoute.ts'

describe('parseRoute', () => {
  it('finds the key, the optional network prefix, and the health routes', () => {
    const cases: [string, ReturnType<typeof parseRoute>][] = [
      ['/v3/abc', { kind: 'rpc', key: 'abc', networkName: undefined }],
      ['/v3/abc/', { kind: 'rpc', key: 'abc', networkName: undefined }],
      ['/v3/abc?x=1', { kind: 'rpc', key: 'abc', networkName: undefined }],
      ['/v3', { kind: 'rpc', key: '', networkName: undefined }],
      ['/v3/', { kind: 'rpc', key: '', networkName: undefined }],
      // the fast path for `/v3/{KEY}` answers as the general one would
      ['/v3/networks', { kind: 'rpc', key: 'networks', networkName: undefined }],
      ['/v3//', { kind: 'rpc', key: '', networkName: undefined }],
      ['/v3/a%2Fb', { kind: 'rpc', key: 'a%2Fb', networkName: undefined }],
      ['/mainnet/v3/abc', { kind: 'rpc', key: 'abc', networkName: 'mainnet' }],
      ['/mainnet/v3/', { kind: 'rpc', key: '', networkName: 'mainnet' }],
      ['/ws/v3/abc', { kind: 'ws', key: 'abc', networkName: undefined }],
      ['/mainnet/ws/v3/abc', { kind: 'ws', key: 'abc', networkName: 'mainnet' }],
      [
        '/networks/1/suggestedGasFees',
        { kind: 'gas', pathKey: undefined, chainId: '1', endpoint: 'suggestedGasFees' },
      ],
      [
        '/v3/abc/networks/1/busyThreshold',
        { kind: 'gas', pathKey: 'abc', chainId: '1', endpoint: 'busyThreshold' },
      ],
      ['/admin/keys', { kind: 'admin' }],
      ['/dashboard', { kind: 'dashboard' }],
      ['/account/api/usage?days=7', { kind: 'account' }],
      ['/account/api', { kind: 'account' }],
      // a network named `account` keeps its paths
      ['/account/v3/abc', { kind: 'rpc', key: 'abc', networkName: 'account' }],
      ['/account/apis', { kind: 'notFound' }],
      ['/account', { kind: 'portal' }],
      ['/account/', { kind: 'portal' }],
      ['/account/?x=1', { kind: 'portal' }],
      ['/account/assets/portal-ABC.js', { kind: 'portal' }],
      ['/account/ws/v3/abc', { kind: 'ws', key: 'abc', networkName: 'account' }],
      ['/account/v3', { kind: 'rpc', key: '', networkName: 'account' }],
      ['/dashboard/assets/app-ABC123.js', { kind: 'dashboard' }],
      ['/healthz', { kind: 'healthz' }],
      ['/readyz', { kind: 'readyz' }],
      ['/metrics', { kind: 'metrics' }],
      ['/metrics?name[]=x', { kind: 'metrics' }],
      ['/', { kind: 'notFound' }],
      ['/v3/abc/extra', { kind: 'notFound' }],
      ['/v2/abc', { kind: 'notFound' }],
      ['//v3/abc', { kind: 'notFound' }],
    ]
    for (const [url, expected] of cases) assert.deepEqual(parseRoute(url), expected, url)
  })
})
