import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
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

/** A server answering every request with `status`, recording the paths it was asked. */
async function readyzServer(status: number): Promise<{ server: Server; port: number; paths: string[] }> {
  const paths: string[] = []
  const server = createServer((req, res) => {
    paths.push(req.url ?? '')
    res.writeHead(status).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, port: (server.address() as AddressInfo).port, paths }
}

/** The health check's command run as the container runs it, with TOLLGATE_PORT set: its exit code. */
function healthCheck(command: string[], port: number): Promise<number | null> {
  const [, ...args] = command
  return new Promise((resolve) => {
    const child = execFile(process.execPath, args, { env: { ...process.env, TOLLGATE_PORT: String(port) } })
    child.once('exit', (code) => resolve(code))
  })
}

describe('compose.yaml', () => {
  it("runs three instances of the Dockerfile, each checked by the image's health check", () => {
    assert.deepEqual(
      instances.map(([name]) => name),
      ['tollgate-1', 'tollgate-2', 'tollgate-3'],
    )
    for (const [, service] of instances) {
      assert.deepEqual(service.build, { context: '.', dockerfile: 'Dockerfile' })
      assert.ok(existsSync(service.build.dockerfile))
      // none of its own, which would name a port of its own: the image's follows TOLLGATE_PORT
      assert.equal(service.healthcheck, undefined)
      assert.match(service.environment?.TOLLGATE_PORT ?? '', /^\d+$/)
    }
  })

  it("the image's health check asks /readyz on the port TOLLGATE_PORT names", async () => {
    const command = JSON.parse(
      /^HEALTHCHECK [^\n]*\\\n\s*CMD (\[.*\])$/m.exec(readFileSync('Dockerfile', 'utf8'))?.[1] ?? '[]',
    )
    assert.equal(command[0], 'node')
    const ready = await readyzServer(200)
    const draining = await readyzServer(503)
    try {
      assert.equal(await healthCheck(command, ready.port), 0)
      assert.equal(await healthCheck(command, draining.port), 1)
      assert.deepEqual(ready.paths, ['/readyz'])
    } finally {
      ready.server.close()
      draining.server.close()
    }
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

  it("its instances' file is a valid config, and nginx sends to every instance on its port", () => {
    for (const [name, service] of instances) {
      const env = { TOLLGATE_HOST: '0.0.0.0', TOLLGATE_PORT: service.environment?.TOLLGATE_PORT ?? '' }
      const config = loadConfig('deploy/compose/tollgate.yaml', env)
      assert.equal(config.server.port, Number(env.TOLLGATE_PORT))
      assert.deepEqual(config.server.trustedProxies, ['172.28.0.10'])
      const nginx = readFileSync('deploy/nginx/compose.conf', 'utf8')
      assert.match(nginx, new RegExp(`server ${name}:${config.server.port} `))
    }
  })
})
