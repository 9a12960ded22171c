import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { parse } from 'yaml'
import { loadConfig } from '../src/config/loadConfig.ts'

// compose.yaml cannot run here (no image registry): what can be checked without running it is.
type Service = {
  build?: { context: string; dockerfile: string }
  image?: string
  volumes?: string[]
  healthcheck?: { test: string[] }
  environment?: Record<string, string>
}
const compose = parse(readFileSync('compose.yaml', 'utf8')) as { services: Record<string, Service> }
const instances = Object.entries(compose.services).filter(([name]) => name.startsWith('tollgate-'))

describe('compose.yaml', () => {
  it('runs three instances of the Dockerfile, each checked on /readyz', () => {
    assert.deepEqual(
      instances.map(([name]) => name),
      ['tollgate-1', 'tollgate-2', 'tollgate-3'],
    )
    for (const [, service] of instances) {
      assert.deepEqual(service.build, { context: '.', dockerfile: 'Dockerfile' })
      assert.ok(existsSync(service.build.dockerfile))
      assert.match(service.healthcheck?.test.join(' ') ?? '', /http:\/\/127\.0\.0\.1:8545\/readyz/)
    }
    assert.match(readFileSync('Dockerfile', 'utf8'), /^HEALTHCHECK [\s\S]*?\/readyz/m)
  })

  it('mounts files that exist, and the instances share PostgreSQL and Redis', () => {
    const mounts = Object.values(compose.services).flatMap((service) => service.volumes ?? [])
    const files = mounts.filter((mount) => mount.startsWith('./')).map((mount) => mount.split(':')[0] ?? '')
    assert.ok(files.length >= 2)
    for (const file of files) assert.ok(existsSync(file), `${file} is mounted but missing`)
    for (const [, service] of instances) {
      assert.match(service.environment?.TOLLGATE_POSTGRES_URL ?? '', /^postgres:\/\/\S+@postgres:5432\//)
      assert.equal(service.environment?.TOLLGATE_REDIS_URL, 'redis://redis:6379')
    }
    for (const name of ['postgres', 'redis', 'nginx']) assert.ok(compose.services[name], name)
  })

  it("its instances' file is a valid config, and nginx sends to every instance", () => {
    const env = { TOLLGATE_HOST: '0.0.0.0' }
    const config = loadConfig('deploy/compose/tollgate.yaml', env)
    assert.equal(config.server.port, 8545)
    assert.deepEqual(config.server.trustedProxies, ['172.28.0.10'])
    const nginx = readFileSync('deploy/nginx/compose.conf', 'utf8')
    for (const [name] of instances) assert.match(nginx, new RegExp(`server ${name}:8545`))
  })
})
