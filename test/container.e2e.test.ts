import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { stringify } from 'yaml'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { freePort } from './helpers/localProcesses.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { devnetOver, nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { createTestPrefix, type TestPrefix } from './helpers/testRedis.ts'
import { until } from './helpers/until.ts'

// The Dockerfile, built with podman on a Node 20 base made on this machine (no image registry is
// reachable here: scripts/ensureNodeImage.js, which npm test runs first, makes it and fills the build
// cache), run with the host's network against the local PostgreSQL, Redis and an anvil of its own.
const execFileAsync = promisify(execFile)
const podmanEnv = { ...process.env, CONTAINERS_CONF: resolve('test/fixtures/containers.conf') }
const nodeImage = 'localhost/tollgate-node:20'
const suffix = randomBytes(4).toString('hex')
const image = `localhost/tollgate:test-${suffix}`
const container = `tollgate-test-${suffix}`
// every layer cached (scripts/ensureNodeImage.js), it takes seconds; a changed source rebuilds dist/
// only; a test file has 180 s
const buildTimeoutMs = 150_000

async function podman(args: string[], timeoutMs = 120_000): Promise<string> {
  const { stdout } = await execFileAsync('podman', args, {
    env: podmanEnv,
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  })
  return stdout.trim()
}

async function inspect(format: string): Promise<string> {
  return podman(['inspect', container, '--format', format])
}

/** What the container wrote, on stdout and stderr. */
async function containerOutput(): Promise<string> {
  const { stdout, stderr } = await execFileAsync('podman', ['logs', container], { env: podmanEnv })
  return stdout + stderr
}

describe('the container image', () => {
  let node: TestNode
  let schema: TestSchema
  let prefix: TestPrefix
  let dir: string
  let url: string

  before(async () => {
    const base = await podman(['image', 'exists', nodeImage]).then(
      () => true,
      () => false,
    )
    // made before the test files run (npm test: scripts/ensureNodeImage.js), as it takes minutes
    if (!base)
      throw new Error(
        `no ${nodeImage} (or no podman): run \`node scripts/ensureNodeImage.js\` first, as npm test does; .ci/run installs podman, runc and debootstrap`,
      )
    await podman(
      [
        'build',
        '--format',
        'docker',
        '--network=host',
        '--build-arg',
        `NODE_IMAGE=${nodeImage}`,
        '--tag',
        image,
        '.',
      ],
      buildTimeoutMs,
    )
    node = await startTestNode({ loadBlocks: 1 })
    schema = await createTestSchema()
    prefix = createTestPrefix()
    dir = mkdtempSync(join(tmpdir(), 'tollgate-container-'))
    const config = {
      storage: { postgres: schema.url },
      redis: { url: prefix.url, keyPrefix: prefix.keyPrefix },
      networks: devnetOver(node),
    }
    // readable by the image's own user, as a mounted config must be
    chmodSync(dir, 0o755)
    writeFileSync(join(dir, 'tollgate.yaml'), stringify(config), { mode: 0o644 })
    const port = await freePort()
    url = `http://127.0.0.1:${port}`
    await podman([
      'run',
      '--detach',
      '--name',
      container,
      '--network=host',
      // the health check is run by the test (podman's timers need systemd, which the sandbox lacks)
      '--health-interval=disable',
      '--volume',
      `${dir}:/config:ro`,
      '--env',
      'TOLLGATE_CONFIG=/config/tollgate.yaml',
      '--env',
      `TOLLGATE_PORT=${port}`,
      image,
    ])
    try {
      await until(
        async () => {
          if ((await inspect('{{.State.Running}}')) !== 'true') throw new Error('the container exited')
          return (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200
        },
        'the container to be ready',
        60_000,
      )
    } catch (err) {
      const output = await containerOutput().catch((why: Error) => why.message)
      throw new Error(`${(err as Error).message}; its output:\n${output}`)
    }
  })

  after(async () => {
    await podman(['rm', '--force', '--ignore', container]).catch(() => undefined)
    // the base image stays (the per-machine cache), and so do the build's layers (podman's build cache)
    await podman(['rmi', '--force', '--ignore', image]).catch(() => undefined)
    await node?.stop()
    await schema?.drop()
    await prefix?.remove()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('serves through a key made by the CLI inside the container', async () => {
    const created = JSON.parse(
      await podman(['exec', container, 'tollgate', 'keys', 'create', '--name', 'container', '--json']),
    ) as { key: string }
    const endpoint = `${url}/v3/${created.key}`
    // the key reaches the running gateway by PostgreSQL's NOTIFY
    await until(async () => (await postJson(endpoint, rpcBody('eth_chainId'))).status === 200, 'the new key')
    assert.deepEqual((await postJson(endpoint, rpcBody('eth_chainId'))).json, {
      jsonrpc: '2.0',
      id: 1,
      result: '0x7a69',
    })
    const head = await nodeRpc(node, 'eth_blockNumber')
    assert.deepEqual((await postJson(endpoint, rpcBody('eth_blockNumber'))).json, {
      jsonrpc: '2.0',
      id: 1,
      result: head,
    })
  })

  it('answers /readyz and passes its own health check', async () => {
    const ready = await fetch(`${url}/readyz`)
    assert.equal(ready.status, 200)
    assert.equal(((await ready.json()) as { database: string }).database, 'open')
    await podman(['healthcheck', 'run', container])
    assert.equal(await inspect('{{.State.Health.Status}}'), 'healthy')
  })

  it('runs as a user other than root, with /data its own', async () => {
    assert.notEqual(await podman(['exec', container, 'id', '-u']), '0')
    assert.equal(await inspect('{{.Config.User}}'), 'tollgate')
    assert.equal(await podman(['exec', container, 'stat', '-c', '%U', '/data']), 'tollgate')
  })

  it('drains and exits 0 on the SIGTERM of `podman stop`', async () => {
    await podman(['stop', '--time', '15', container])
    assert.equal(await inspect('{{.State.ExitCode}}'), '0')
    assert.match(
      await containerOutput(),
      /"signal":"SIGTERM","msg":"draining in-flight requests and stopping"/,
    )
  })
})
