import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import WebSocket from 'ws'
import { stringify } from 'yaml'
import { bin, exited, type GatewayProcess, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { freePort } from './helpers/localProcesses.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const run = promisify(execFile)

/** What a WebSocket's end looked like to its client. */
type Closed = { code: number; reason: string }

/**
 * `tollgate start` as its own process, changed while it serves (docs/operations.md "Reloading
 * configuration"): SIGHUP with a changed file, a refused port change, an invalid file; then SIGTERM.
 */
describe('tollgate start: SIGHUP reloads, SIGTERM drains', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-reload-'))
  const configFile = join(dir, 'tollgate.yaml')
  let node: TestNode
  /** An upstream in front of the node that holds eth_getBalance until the test releases it. */
  let slow: FakeUpstream
  let release: () => void = () => {}
  let port: number
  let gateway: GatewayProcess
  let coreKey = ''
  let developerKey = ''
  const base = () => ({
    server: { host: '127.0.0.1', port },
    storage: { sqlite: join(dir, 'tollgate.db') },
    // a call lasts at most this: a network left by a reload stops this long after it
    upstreams: { timeoutMs: 6_000 },
    log: { level: 'info' },
  })
  const writeConfig = (config: unknown) => writeFileSync(configFile, stringify(config))
  const rpc = (path: string, key: string, method: string, params: unknown[] = []) =>
    postJson(`http://127.0.0.1:${port}${path}/v3/${key}`, rpcBody(method, params))
  /** Log lines (pino JSON) with this message, from the gateway's output so far. */
  const logged = (message: string) =>
    gateway
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; [field: string]: unknown })
      .filter((line) => line.msg.startsWith(message))
  const hangUp = async (count: number) => {
    gateway.child.kill('SIGHUP')
    await until(() => logged('config reloaded').length >= count, `reload ${count} logged`)
  }

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    slow = await startFakeUpstream({
      kind: 'rewrite',
      target: node.url,
      respond: (request) =>
        request.method === 'eth_getBalance'
          ? new Promise<undefined>((resolve) => {
              release = () => resolve(undefined)
            })
          : undefined,
    })
    port = await freePort()
    writeConfig({
      ...base(),
      networks: [{ name: 'one', chainId: 31337, upstreams: [{ url: slow.url, name: 'slow' }] }],
    })
    const create = async (plan: string) =>
      (
        JSON.parse(
          (
            await run(process.execPath, [
              bin,
              'keys',
              'create',
              '--plan',
              plan,
              '--json',
              '--config',
              configFile,
            ])
          ).stdout,
        ) as { key: string }
      ).key
    coreKey = await create('core')
    developerKey = await create('developer')
    gateway = await startGatewayProcess(['start', '--config', configFile])
  })
  after(async () => {
    if (gateway && gateway.child.exitCode === null) gateway.child.kill('SIGKILL')
    await slow?.close()
    await node?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('a changed file: a call in flight finishes on the old upstream, new calls use the new networks, upstreams and plan numbers', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/one/ws/v3/${coreKey}`)
    await new Promise((resolve) => socket.once('open', resolve))
    const closed = new Promise<Closed>((resolve) =>
      socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    )
    const address = '0x0000000000000000000000000000000000000001'
    const inFlight = rpc('/one', coreKey, 'eth_getBalance', [address, 'latest'])
    await until(() => slow.requests.some((request) => request.method === 'eth_getBalance'), 'the held call')

    writeConfig({
      ...base(),
      networks: [
        { name: 'one', chainId: 31337, upstreams: [{ url: node.url, name: 'direct' }] },
        { name: 'two', chainId: 31337, upstreams: [{ url: node.url, name: 'second' }] },
      ],
      plans: { developer: { dailyCredits: 100 } },
    })
    await hangUp(1)
    const [reloaded] = logged('config reloaded')
    assert.deepEqual(reloaded?.networks, { added: ['two'], removed: [], rebuilt: ['one'] })
    assert.deepEqual(reloaded?.changed, ['networks', 'plans.developer.dailyCredits'])

    release()
    const answer = await inFlight
    assert.equal(answer.status, 200, answer.text)
    assert.equal((answer.json as { result: string }).result, '0x0', 'answered by the old upstream')

    const before = slow.requests.length
    const added = await rpc('/two', coreKey, 'eth_blockNumber')
    assert.equal(added.status, 200, added.text)
    const rebuilt = await rpc('/one', coreKey, 'eth_chainId')
    assert.equal(rebuilt.status, 200, rebuilt.text)
    assert.ok(
      slow.requests.slice(before).every((request) => request.method !== 'eth_chainId'),
      'the new upstream served it',
    )
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
    const body = (await ready.json()) as { networks: { network: string; upstreams: { name: string }[] }[] }
    assert.deepEqual(
      body.networks.map(({ network, upstreams }) => [network, upstreams.map((upstream) => upstream.name)]),
      [
        ['one', ['direct']],
        ['two', ['second']],
      ],
    )

    // 100 credits a day now: one eth_blockNumber (80) and no second
    assert.equal((await rpc('/two', developerKey, 'eth_blockNumber')).status, 200)
    assert.equal((await rpc('/two', developerKey, 'eth_blockNumber')).status, 402)

    // the old network stops once its calls are done (upstreams.timeoutMs): its sockets are told
    assert.deepEqual(await closed, { code: 1001, reason: 'network reconfigured, reconnect' })
  })

  it('a port change is refused with one line naming it; the rest of the file is taken', async () => {
    const newPort = await freePort()
    writeConfig({
      ...base(),
      server: { host: '127.0.0.1', port: newPort, maxBatchSize: 2 },
      networks: [
        { name: 'one', chainId: 31337, upstreams: [{ url: node.url, name: 'direct' }] },
        { name: 'two', chainId: 31337, upstreams: [{ url: node.url, name: 'second' }] },
      ],
      plans: { developer: { dailyCredits: 100 } },
    })
    await hangUp(2)
    const refusals = logged('config reload: these keys need a restart')
    assert.equal(refusals.length, 1)
    assert.deepEqual(refusals[0]?.keys, ['server.port'])
    assert.deepEqual(logged('config reloaded')[1]?.networks, { added: [], removed: [], rebuilt: [] })
    // still on the old port, not on the new one
    assert.equal((await rpc('/two', coreKey, 'eth_blockNumber')).status, 200)
    await assert.rejects(fetch(`http://127.0.0.1:${newPort}/readyz`))
    // server.maxBatchSize is live: a batch of 3 is refused now
    const batch = await postJson(`http://127.0.0.1:${port}/two/v3/${coreKey}`, [
      rpcBody('eth_chainId', [], 1),
      rpcBody('eth_chainId', [], 2),
      rpcBody('eth_chainId', [], 3),
    ])
    assert.match(batch.text, /batch/i)
  })

  it('an invalid file is refused whole, naming the wrong keys; the gateway serves on as it was', async () => {
    writeConfig({ ...base(), networks: [{ name: 'Bad Name', chainId: 0, upstreams: [] }] })
    gateway.child.kill('SIGHUP')
    await until(() => logged('config reload refused').length === 1, 'the refusal logged')
    const [refusal] = logged('config reload refused')
    assert.match(refusal?.msg ?? '', /networks\.0\.name/)
    assert.match(refusal?.msg ?? '', /networks\.0\.chainId/)
    assert.equal((await rpc('/two', coreKey, 'eth_blockNumber')).status, 200)
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    assert.match(metrics, /tollgate_config_reloads_total\{result="invalid"\} 1/)
    assert.match(metrics, /tollgate_config_reloads_total\{result="applied"\} 2/)
    assert.match(metrics, /tollgate_config_loaded_timestamp_seconds \d/)
  })

  it('SIGTERM: a call in flight is answered, WebSocket clients get 1001 with a reconnect hint, exit code 0', async () => {
    // back on the slow upstream, whose eth_getBalance waits for the test
    writeConfig({
      ...base(),
      networks: [{ name: 'one', chainId: 31337, upstreams: [{ url: slow.url, name: 'slow' }] }],
    })
    await hangUp(3)
    const socket = new WebSocket(`ws://127.0.0.1:${port}/one/ws/v3/${coreKey}`)
    await new Promise((resolve) => socket.once('open', resolve))
    const subscribed = new Promise((resolve) => socket.once('message', resolve))
    socket.send(JSON.stringify(rpcBody('eth_subscribe', ['newHeads'])))
    await subscribed
    const closed = new Promise<Closed>((resolve) =>
      socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    )
    const asked = slow.requests.filter((request) => request.method === 'eth_getBalance').length
    const inFlight = rpc('/one', coreKey, 'eth_getBalance', [
      '0x0000000000000000000000000000000000000002',
      'latest',
    ])
    await until(
      () => slow.requests.filter((request) => request.method === 'eth_getBalance').length > asked,
      'the held call',
    )
    const exit = exited(gateway.child)
    gateway.child.kill('SIGTERM')
    assert.deepEqual(await closed, { code: 1001, reason: 'server restarting, reconnect' })
    release()
    const answer = await inFlight
    assert.equal(answer.status, 200, answer.text)
    assert.equal(await exit, 0)
  })
})

describe('tollgate start on the embedded devnet: SIGHUP', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-reload-devnet-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('has no file to reload, and says so', async () => {
    const port = await freePort()
    const gateway = await startGatewayProcess(['start', '--port', String(port)], { cwd: dir })
    try {
      gateway.child.kill('SIGHUP')
      await until(() => gateway.output().includes('nothing to reload'), 'the notice')
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
      assert.equal(ready.status, 200)
      const exit = exited(gateway.child)
      gateway.child.kill('SIGTERM')
      assert.equal(await exit, 0)
    } finally {
      if (gateway.child.exitCode === null) gateway.child.kill('SIGKILL')
    }
  })
})
