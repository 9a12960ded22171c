import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import WebSocket from 'ws'
import { stringify } from 'yaml'
import { formatGwei } from '../src/gas/formatGwei.ts'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { bin, exited, type GatewayProcess, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { nodeRpc, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const token = 'instances-admin-token'
const chainId = 31337
/** What the gateway logs when it takes the lead of a chain's fee indexing. */
const leads = /"msg":"this instance indexes the fee history of the chain"/

const run = promisify(execFile)

/** A WebSocket on `key` that has been answered once; `closed()`: how it ended, undefined while open. */
async function openSocket(instance: GatewayProcess, key: string) {
  const socket = new WebSocket(`${instance.url.replace('http', 'ws')}/ws/v3/${key}`)
  let closed: { code: number; reason: string } | undefined
  socket.once('close', (code, reason) => {
    closed = { code, reason: reason.toString() }
  })
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
  const answered = new Promise<unknown>((resolve) =>
    socket.once('message', (data) => resolve(JSON.parse(data.toString()))),
  )
  socket.send(JSON.stringify(rpcBody('eth_chainId', [], 1)))
  assert.deepEqual(await answered, { jsonrpc: '2.0', id: 1, result: '0x7a69' })
  return { closed: () => closed }
}

describe('many gateway processes on one Postgres schema', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-instances-'))
  let node: TestNode
  let schema: TestSchema
  let configFile: string
  const instances: GatewayProcess[] = []
  /** The `tollgate` CLI, as its own process, on the gateways' config. */
  const tollgate = async (args: string[]) => {
    const env = { ...process.env }
    delete env.TOLLGATE_CONFIG
    delete env.TOLLGATE_POSTGRES_URL
    return (await run(process.execPath, [bin, ...args, '--config', configFile], { env })).stdout
  }

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    schema = await createTestSchema({ create: false })
    configFile = join(dir, 'gateway.yaml')
    writeFileSync(
      configFile,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        storage: { postgres: schema.url },
        networks: [{ name: 'devnet', chainId, upstreams: [{ url: node.url }] }],
        upstreams: { headPollMs: 100 },
        // one window short of the chain's length: baseFeeHistory's length tells the head it ends at
        gas: { windowBlocks: 1024, historyBlocks: 1024 },
        admin: { token },
        log: { level: 'info' },
      }),
    )
    // one after the other: the first migrates, both then share the schema
    for (let i = 0; i < 2; i++) instances.push(await startGatewayProcess(['start', '--config', configFile]))
  })
  after(async () => {
    for (const { child } of instances) {
      child.kill('SIGTERM')
      await exited(child)
    }
    await schema?.drop()
    await node?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  const admin = async (instance: GatewayProcess, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${instance.url}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return { status: response.status, json: (await response.json()) as { key: string } }
  }
  const statusOf = async (instance: GatewayProcess, key: string) =>
    (await postJson(`${instance.url}/v3/${key}`, rpcBody('eth_chainId'))).status

  // A change reaches the other instances at once by the database's notification (its parts tested in
  // src/auth: createPostgresKeyWatch, the key registry's watch cue), or else by the registry's refresh
  // each second; on the wall clock of a loaded machine the tests wait for it with until's own bound,
  // and print the time it took.
  it('a key created and revoked through instance 1 reaches instance 2; its socket there is closed with 1008', async (t) => {
    const [one, two] = instances as [GatewayProcess, GatewayProcess]
    const created = await admin(one, 'POST', '/keys', { plan: 'developer', name: 'shared' })
    assert.equal(created.status, 201)
    const createdAt = Date.now()
    const { key } = created.json
    await until(async () => (await statusOf(two, key)) === 200, 'instance 2 serving the new key')
    const createdMs = Date.now() - createdAt

    const socket = await openSocket(two, key)

    // timed from the revocation's request (the wait starts with it) to instance 2 refusing the key and
    // closing its socket
    const revokedAt = Date.now()
    const revoked = admin(one, 'DELETE', `/keys/${key}`)
    const stopped = until(
      async () => socket.closed() !== undefined && (await statusOf(two, key)) === 401,
      'instance 2 refusing the revoked key and closing its socket',
    )
    const [response] = await Promise.all([revoked, stopped])
    assert.equal(response.status, 200)
    assert.deepEqual(socket.closed(), { code: 1008, reason: 'key revoked' })
    t.diagnostic(
      `created → served by instance 2: ${createdMs} ms; revoked → refused, socket closed: ${Date.now() - revokedAt} ms`,
    )
  })

  it('a key revoked by the CLI (a process of its own) is refused by both instances; its socket is closed', async (t) => {
    const [one, two] = instances as [GatewayProcess, GatewayProcess]
    const { key } = JSON.parse(await tollgate(['keys', 'create', '--name', 'by-cli', '--json']))
    await until(
      async () => (await statusOf(one, key)) === 200 && (await statusOf(two, key)) === 200,
      'served',
    )
    const socket = await openSocket(one, key)
    assert.equal(await tollgate(['keys', 'revoke', key]), 'revoked\n')
    const revokedAt = Date.now()
    // timed from the CLI's exit to both refusing the key with the socket closed
    await until(
      async () =>
        socket.closed() !== undefined &&
        (await statusOf(one, key)) === 401 &&
        (await statusOf(two, key)) === 401,
      'both instances refusing the revoked key and its socket closed',
    )
    assert.deepEqual(socket.closed(), { code: 1008, reason: 'key revoked' })
    t.diagnostic(`CLI revoke exited → refused by both, socket closed: ${Date.now() - revokedAt} ms`)
  })

  it('one instance indexes fees, the other serves the Gas API from the store; SIGKILL the indexer and the survivor takes over', async (t) => {
    const { key } = (await admin(instances[0] as GatewayProcess, 'POST', '/keys', { plan: 'developer' })).json
    await until(async () => (await statusOf(instances[1] as GatewayProcess, key)) === 200, 'the key on both')
    await until(() => instances.some((instance) => leads.test(instance.output())), 'a leader')
    const leaders = instances.filter((instance) => leads.test(instance.output()))
    assert.equal(leaders.length, 1, 'exactly one instance indexes')
    const leader = leaders[0] as GatewayProcess
    const survivor = instances.find((instance) => instance !== leader) as GatewayProcess

    const history = async (instance: GatewayProcess) => {
      const response = await fetch(`${instance.url}/networks/${chainId}/baseFeeHistory`, {
        headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` },
      })
      return response.status === 200 ? ((await response.json()) as string[]) : undefined
    }
    /** The node's head and the base fee history the Gas API gives at it (the window is the whole chain). */
    const expected = async () => {
      const head = (await nodeRpc(node, 'eth_getBlockByNumber', ['latest', false])) as {
        number: string
        baseFeePerGas: string
      }
      return { length: Number(head.number) + 1, last: formatGwei(BigInt(head.baseFeePerGas)) }
    }
    const atHead = async (instance: GatewayProcess) => {
      const [answer, want] = [await history(instance), await expected()]
      return answer?.length === want.length && answer[answer.length - 1] === want.last
    }

    await nodeRpc(node, 'evm_mine')
    await until(() => atHead(leader), "the leader's window at the new head")
    // the follower indexes nothing; its answer comes from what the leader stored
    await until(() => atHead(survivor), "the follower's window at the new head")
    assert.deepEqual(await history(survivor), await history(leader))
    assert.doesNotMatch(survivor.output(), leads)

    const killedAt = Date.now()
    leader.child.kill('SIGKILL')
    await exited(leader.child)
    await nodeRpc(node, 'evm_mine')
    await nodeRpc(node, 'evm_mine')
    await until(() => atHead(survivor), 'the survivor at the new head', 10_000)
    assert.match(survivor.output(), leads)
    t.diagnostic(
      `SIGKILL of the indexer → the survivor's Gas API at the new head: ${Date.now() - killedAt} ms`,
    )
  })
})
