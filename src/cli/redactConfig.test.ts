import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parse } from 'yaml'
import { loadConfig } from '../config/loadConfig.ts'
import { redactedYaml } from './redactConfig.ts'

/** What `config check` prints, read back. */
const redactConfig = (config: unknown): unknown => parse(redactedYaml(config))

const redacted = '(redacted)'

describe('redactedYaml', () => {
  it('node URLs as logs show them: scheme, host and port; credentials, paths and queries hidden', () => {
    assert.deepEqual(
      redactConfig({
        upstreams: [
          { url: 'http://10.0.0.5:8545', ws: 'ws://10.0.0.5:8546', name: 'geth-1' },
          {
            url: 'https://user:pass@node.vendor.example/v3/VENDORKEY',
            ws: 'wss://node.vendor.example/ws/KEY',
          },
          { url: 'https://partner.example/?apikey=xyz' },
        ],
      }),
      {
        upstreams: [
          { url: 'http://10.0.0.5:8545', ws: 'ws://10.0.0.5:8546', name: 'geth-1' },
          { url: 'https://…@node.vendor.example/…', ws: 'wss://node.vendor.example/…' },
          { url: 'https://…@partner.example' },
        ],
      },
    )
  })

  it('database and Redis URLs keep user, host, database and parameters, not the password or a secret parameter', () => {
    assert.deepEqual(
      redactConfig({
        storage: {
          postgres: 'postgres://tollgate:s3cret@db:5432/tollgate?schema=tg&sslmode=require&sslpassword=pw',
        },
        redis: { url: 'redis://:redispw@cache:6379/0', keyPrefix: 'tollgate:' },
        other: 'rediss://cache:6380',
      }),
      {
        storage: {
          postgres: `postgres://tollgate:${redacted}@db:5432/tollgate?schema=tg&sslmode=require&sslpassword=${redacted}`,
        },
        redis: { url: `redis://:${redacted}@cache:6379/0`, keyPrefix: 'tollgate:' },
        other: 'rediss://cache:6380',
      },
    )
  })

  it('secret-named keys at any depth, in objects and lists; other values untouched', () => {
    assert.deepEqual(
      redactConfig({
        admin: { token: 'a'.repeat(20) },
        metrics: { enabled: true, token: 'b'.repeat(20) },
        exporter: { headers: { Authorization: 'Bearer x', 'x-api-key': 'y', accept: 'json' } },
        jwtSecret: 'z',
        credentials: { user: 'u', pass: 'p' },
        apiKeys: ['k1', 'k2'],
        requireToken: true,
        hosts: ['eth.rpc.example.com'],
        origins: ['https://app.example', '*.example.com'],
        port: 8545,
        none: null,
      }),
      {
        admin: { token: redacted },
        metrics: { enabled: true, token: redacted },
        exporter: { headers: { Authorization: redacted, 'x-api-key': redacted, accept: 'json' } },
        jwtSecret: redacted,
        credentials: redacted,
        apiKeys: redacted,
        requireToken: true,
        hosts: ['eth.rpc.example.com'],
        origins: ['https://app.example', '*.example.com'],
        port: 8545,
        none: null,
      },
    )
  })

  it('a loaded config: no secret of it is left in the copy', () => {
    const secrets = ['adminTOKEN0123456789', 'metricsTOKEN0123456789', 's3cretPW', 'redisPW', 'VENDORKEY']
    const config = loadConfig(undefined, {
      TOLLGATE_ADMIN_TOKEN: secrets[0],
      TOLLGATE_POSTGRES_URL: `postgres://tollgate:${secrets[2]}@db/tollgate`,
      TOLLGATE_REDIS_URL: `redis://default:${secrets[3]}@cache:6379`,
    })
    config.metrics.token = secrets[1] as string
    config.networks.push({
      name: 'mainnet',
      chainId: 1,
      upstreams: [{ url: `https://node.vendor.example/v3/${secrets[4]}` }],
      partners: [],
      hosts: [],
    })
    const text = JSON.stringify(redactConfig(config))
    for (const secret of secrets) assert.ok(!text.includes(secret), `${secret} in ${text}`)
    assert.match(text, /"postgres":"postgres:\/\/tollgate:\(redacted\)@db\/tollgate"/)
  })
})
