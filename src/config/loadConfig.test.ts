import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { ConfigError, loadConfig } from './loadConfig.ts'

const dir = mkdtempSync(join(tmpdir(), 'tollgate-config-'))
after(() => rmSync(dir, { recursive: true, force: true }))

function write(name: string, text: string): string {
  const file = join(dir, name)
  writeFileSync(file, text)
  return file
}

describe('loadConfig', () => {
  it('TOLLGATE_ADMIN_TOKEN fills admin.token when the file has none', () => {
    const env = { TOLLGATE_ADMIN_TOKEN: 'token-from-the-environment' }
    assert.equal(loadConfig(undefined, env).admin.token, 'token-from-the-environment')
    assert.equal(loadConfig(undefined, {}).admin.token, undefined)
    const file = write('admin.yaml', 'admin: { token: token-from-the-file-0123 }\n')
    assert.equal(loadConfig(file, env).admin.token, 'token-from-the-file-0123')
  })

  it('accounts.oidc: defaults, TOLLGATE_OIDC_CLIENT_SECRET when the file has no secret, and the refusals', () => {
    const oidc = (fields: string) =>
      write('oidc.yaml', `accounts:\n  oidc: { clientId: tollgate, ${fields} }\n`)
    const good =
      'issuer: "https://idp.example/realms/a", redirectUrl: "https://rpc.example/account/api/oidc/callback"'
    const env = { TOLLGATE_OIDC_CLIENT_SECRET: 'from-the-environment' }
    const loaded = loadConfig(oidc(good), env).accounts.oidc
    assert.deepEqual(loaded, {
      issuer: 'https://idp.example/realms/a',
      clientId: 'tollgate',
      clientSecret: 'from-the-environment',
      redirectUrl: 'https://rpc.example/account/api/oidc/callback',
      claim: 'tollgate_account',
      scopes: [],
      timeoutSeconds: 10,
    })
    assert.equal(
      loadConfig(oidc(`${good}, clientSecret: in-the-file`), env).accounts.oidc?.clientSecret,
      'in-the-file',
    )
    assert.equal(loadConfig(undefined, env).accounts.oidc, undefined)
    for (const [fields, message] of [
      [
        good.replace('https://idp', 'http://idp'),
        'accounts.oidc.issuer: expected an https URL (http only to localhost)',
      ],
      [
        good.replace('/account/api/oidc/callback', '/callback'),
        'accounts.oidc.redirectUrl: expected the gateway',
      ],
      ['redirectUrl: "https://rpc.example/account/api/oidc/callback"', 'accounts.oidc.issuer:'],
    ] as const) {
      assert.throws(
        () => loadConfig(oidc(fields), {}),
        (err: Error) => err instanceof ConfigError && err.message.includes(message),
        fields,
      )
    }
    const local = good.replace('https://idp.example', 'http://127.0.0.1:8080')
    assert.equal(loadConfig(oidc(local), {}).accounts.oidc?.issuer, 'http://127.0.0.1:8080/realms/a')
  })

  it('storage is one of sqlite or postgres; redis is optional with a key prefix', () => {
    const pg = loadConfig(
      write('pg.yaml', 'storage: { postgres: "postgres://postgres@db.example:5432/tollgate" }\n'),
    )
    assert.deepEqual(pg.storage, { postgres: 'postgres://postgres@db.example:5432/tollgate' })
    assert.equal(pg.redis, undefined)
    assert.equal(pg.metering.onRedisDown, 'open')
    assert.equal(pg.metering.redisTimeoutMs, 1_000)
    const redis = loadConfig(write('redis.yaml', 'redis: { url: "redis://cache.example:6379" }\n'))
    assert.deepEqual(redis.redis, { url: 'redis://cache.example:6379', keyPrefix: 'tollgate:' })
    for (const [name, text, message] of [
      [
        'both.yaml',
        'storage: { sqlite: a.db, postgres: "postgres://h/db" }\n',
        /storage: expected exactly one of sqlite/,
      ],
      ['neither.yaml', 'storage: {}\n', /storage: expected exactly one of sqlite/],
      [
        'redis-url.yaml',
        'redis: { url: "http://cache.example:6379" }\n',
        /redis\.url: expected a redis:\/\//,
      ],
      ['down.yaml', 'metering: { onRedisDown: maybe }\n', /metering\.onRedisDown/],
      ['timeout.yaml', 'metering: { redisTimeoutMs: 0 }\n', /metering\.redisTimeoutMs/],
    ] as const)
      assert.throws(() => loadConfig(write(name, text)), message)
  })

  it('TOLLGATE_POSTGRES_URL and TOLLGATE_REDIS_URL override the file', () => {
    const file = write(
      'env.yaml',
      'storage: { sqlite: a.db }\nredis: { url: "redis://a:1", keyPrefix: "app:" }\n',
    )
    const env = {
      TOLLGATE_POSTGRES_URL: 'postgres://postgres@db.example/tollgate',
      TOLLGATE_REDIS_URL: 'redis://b:2',
    }
    const config = loadConfig(file, env)
    assert.deepEqual(config.storage, { postgres: 'postgres://postgres@db.example/tollgate' })
    assert.deepEqual(config.redis, { url: 'redis://b:2', keyPrefix: 'app:' })
    assert.deepEqual(loadConfig(file, {}).storage, { sqlite: 'a.db' })
    assert.throws(
      () => loadConfig(undefined, { TOLLGATE_POSTGRES_URL: 'mysql://h/db' }),
      /environment: invalid TOLLGATE_POSTGRES_URL or TOLLGATE_REDIS_URL\n {2}storage/,
    )
  })

  it('TOLLGATE_HOST and TOLLGATE_PORT override server.host and server.port', () => {
    const file = write('listen.yaml', 'server: { host: 127.0.0.1, port: 9000 }\n')
    const config = loadConfig(file, { TOLLGATE_HOST: '0.0.0.0', TOLLGATE_PORT: '18545' })
    assert.deepEqual([config.server.host, config.server.port], ['0.0.0.0', 18545])
    assert.equal(loadConfig(undefined, { TOLLGATE_HOST: '0.0.0.0' }).server.port, 8545)
    assert.equal(loadConfig(file, {}).server.host, '127.0.0.1')
    for (const port of ['http', '8545.5', '70000'])
      assert.throws(
        () => loadConfig(file, { TOLLGATE_PORT: port }),
        /environment: invalid TOLLGATE_HOST or TOLLGATE_PORT\n {2}port/,
      )
  })

  it('reads the documented shape and fills the defaults', () => {
    const file = write(
      'ok.yaml',
      `server: { host: 127.0.0.1, port: 8545 }
storage: { sqlite: ./data/tollgate.db }
networks:
  - name: mainnet
    chainId: 1
    upstreams:
      - { url: http://127.0.0.1:8546, ws: ws://127.0.0.1:8546 }
    partners:
      - { url: https://partner.example/rpc }
`,
    )
    const config = loadConfig(file)
    assert.equal(config.networks[0]?.upstreams[0]?.ws, 'ws://127.0.0.1:8546')
    assert.equal(config.upstreams.timeoutMs, 30_000)
    assert.equal(config.server.maxBodyBytes, 5 * 1024 * 1024)
    assert.equal(config.server.maxBatchSize, 1000)
    assert.equal(config.devnet, undefined)
  })

  it('with no file: the embedded devnet on SQLite', () => {
    const config = loadConfig(undefined)
    assert.deepEqual(config.devnet, { blockTimeSeconds: 2, seed: true })
    assert.deepEqual(config.storage, { sqlite: './data/tollgate.db' })
    assert.equal(config.server.port, 8545)
  })

  it('a file without networks: the embedded devnet', () => {
    const config = loadConfig(write('no-networks.yaml', 'server: { port: 9000 }\n'))
    assert.deepEqual(config.devnet, { blockTimeSeconds: 2, seed: true })
    assert.deepEqual(config.networks, [])
    assert.equal(config.server.port, 9000)
  })

  it('an explicit empty networks list is an error, not the devnet, beside any other errors', () => {
    for (const text of ['networks: []\n', 'devnet: {}\nnetworks: []\n']) {
      const file = write('empty-networks.yaml', text)
      assert.throws(
        () => loadConfig(file),
        (err: Error) => {
          assert.ok(err instanceof ConfigError)
          assert.equal(
            err.message,
            `${file}: invalid config\n  networks: at least one network is needed; leave the key out for the embedded devnet`,
          )
          return true
        },
      )
    }
    const both = write('empty-and-bad.yaml', 'server: { port: eighty }\nnetworks: []\n')
    assert.throws(
      () => loadConfig(both),
      (err: Error) => {
        assert.match(err.message, /server\.port: .*expected number/)
        assert.match(err.message, /networks: at least one network is needed/)
        return true
      },
    )
  })

  it('errors name the file, the path and what was expected', () => {
    const file = write(
      'bad.yaml',
      `server: { port: eighty, hostname: x, prot: 1 }
networks:
  - name: Main Net
    chainId: 1
    upstreams: [{ url: 'ftp://x' }]
surprise: true
`,
    )
    assert.throws(
      () => loadConfig(file),
      (err: Error) => {
        assert.ok(err instanceof ConfigError)
        assert.ok(err.message.startsWith(`${file}: invalid config`))
        assert.match(err.message, /server\.port: .*expected number/)
        assert.match(err.message, /networks\.0\.name: expected lowercase letters/)
        assert.match(err.message, /networks\.0\.upstreams\.0\.url: expected an http\(s\) URL/)
        // each unknown key on a line of its own, at its full path
        assert.match(err.message, /^ {2}surprise: unknown key$/m)
        assert.match(err.message, /^ {2}server\.hostname: unknown key\n {2}server\.prot: unknown key$/m)
        return true
      },
    )
  })

  it('refuses the removed keys websocket.headPollMs and gas.pollMs, naming the key to set instead', () => {
    const file = write('removed.yaml', 'websocket: { headPollMs: 100 }\ngas: { pollMs: 250 }\n')
    assert.throws(
      () => loadConfig(file),
      (err: Error) => {
        assert.ok(err instanceof ConfigError)
        assert.equal(
          err.message,
          `${file}: invalid config\n` +
            '  websocket.headPollMs: removed: set upstreams.headPollMs instead\n' +
            '  gas.pollMs: removed: set upstreams.headPollMs instead',
        )
        return true
      },
    )
    // the keys around them still load
    const kept = loadConfig(
      write('kept.yaml', 'websocket: { pingMs: 100 }\nupstreams: { headPollMs: 250 }\n'),
    )
    assert.deepEqual([kept.websocket.pingMs, kept.upstreams.headPollMs], [100, 250])
  })

  it('refuses unreadable files, bad YAML and duplicate networks with the file name', () => {
    assert.throws(
      () => loadConfig(join(dir, 'missing.yaml')),
      /missing\.yaml: cannot read the config file \(ENOENT\)/,
    )
    assert.throws(() => loadConfig(write('yaml.yaml', 'a: [1,')), /yaml\.yaml: not valid YAML/)
    const net = '{ name: a, chainId: 1, upstreams: [{ url: "http://127.0.0.1:1" }] }'
    assert.throws(
      () => loadConfig(write('dup.yaml', `networks: [${net}, ${net}]`)),
      /duplicate network name 'a'/,
    )
  })

  it('defaultNetwork names a network of the file (the embedded devnet counts when it runs), or is false', () => {
    const net = (name: string) => `{ name: ${name}, chainId: 1, upstreams: [{ url: "http://127.0.0.1:1" }] }`
    assert.equal(
      loadConfig(write('default-b.yaml', `defaultNetwork: b\nnetworks: [${net('a')}, ${net('b')}]`))
        .defaultNetwork,
      'b',
    )
    assert.equal(
      loadConfig(write('default-off.yaml', `defaultNetwork: false\nnetworks: [${net('a')}]`)).defaultNetwork,
      false,
    )
    assert.equal(
      loadConfig(write('default-devnet.yaml', `devnet: {}\ndefaultNetwork: devnet\nnetworks: [${net('a')}]`))
        .defaultNetwork,
      'devnet',
    )
    assert.throws(
      () =>
        loadConfig(write('default-missing.yaml', `defaultNetwork: c\nnetworks: [${net('a')}, ${net('b')}]`)),
      /default-missing\.yaml: defaultNetwork: no network is named 'c' \(the networks are a, b\)/,
    )
    // without the devnet, `devnet` names nothing
    assert.throws(
      () => loadConfig(write('default-no-devnet.yaml', `defaultNetwork: devnet\nnetworks: [${net('a')}]`)),
      /no network is named 'devnet'/,
    )
    assert.throws(
      () => loadConfig(write('default-true.yaml', `defaultNetwork: true\nnetworks: [${net('a')}]`)),
      /defaultNetwork/,
    )
  })
})
