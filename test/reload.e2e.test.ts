import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { stringify } from 'yaml'
import { bin, exited, type GatewayProcess, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { freePort } from './helpers/localProcesses.ts'
import { openSocket } from './helpers/openSocket.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { readMetrics } from './helpers/readMetrics.ts'
import { type HoldingUpstream, startHoldingUpstream } from './helpers/startHoldingUpstream.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const run = promisify(execFile)

/** pino's JSON lines with this message, from a process's output so far. */
function logLines(output: string, message: string) {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; [field: string]: unknown })
    .filter((line) => line.msg.startsWith(message))
}

/**
 * `tollgate start` as its own process, changed while it serves (docs/operations.md "Reloading
 * configuration"): SIGHUP with a changed file, a refused port change, an invalid file, a rebuild that
 * keeps the Gas API and WebSocket upgrades answering. Each test writes the file it needs and counts
 * from what was logged before it: none depends on another's order.
 */
describe('tollgate start: SIGHUP reloads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-reload-'))
  const configFile = join(dir, 'tollgate.yaml')
  let node: TestNode
  /** An upstream in front of the node that holds eth_getBalance until the test releases it. */
  let slow: HoldingUpstream
  const heldCalls = () => slow.requests.filter((request) => request.method === 'eth_getBalance').length
  let port: number
  let gateway: GatewayProcess
  let coreKey = ''
  let developerKey = ''
  /** A high rate limit: the Gas API asked back to back. */
  let customKey = ''
  const base = (timeoutMs = 6_000) => ({
    server: { host: '127.0.0.1', port },
    storage: { sqlite: join(dir, 'tollgate.db') },
    // a call lasts at most this: a network left by a reload stops at the latest about this long after it
    upstreams: { timeoutMs },
    log: { level: 'info' },
  })
  const onSlow = () => ({
    ...base(),
    networks: [{ name: 'one', chainId: 31337, upstreams: [{ url: slow.url, name: 'slow' }] }],
  })
  const writeConfig = (config: unknown) => writeFileSync(configFile, stringify(config))
  const rpc = (path: string, key: string, method: string, params: unknown[] = []) =>
    postJson(`http://127.0.0.1:${port}${path}/v3/${key}`, rpcBody(method, params))
  const logged = (message: string) => logLines(gateway.output(), message)
  /** SIGHUP, and the next `config reloaded` line (the one this signal caused). */
  const hangUp = async () => {
    const count = logged('config reloaded').length
    gateway.child.kill('SIGHUP')
    await until(() => logged('config reloaded').length > count, 'the reload logged')
    return logged('config reloaded')[count]
  }
  const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    slow = await startHoldingUpstream(node.url, 'eth_getBalance')
    port = await freePort()
    writeConfig(onSlow())
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
    customKey = await create('team')
    gateway = await startGatewayProcess(['start', '--config', configFile])
  })
  after(async () => {
    if (gateway && gateway.child.exitCode === null) gateway.child.kill('SIGKILL')
    slow.release()
    await slow?.close()
    await node?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('a changed file: calls in flight finish on the old upstream (HTTP and WebSocket), new calls use the new networks, upstreams and plan numbers', async () => {
    writeConfig(onSlow())
    await hangUp()
    const ws = await openSocket(`ws://127.0.0.1:${port}/one/ws/v3/${coreKey}`)
    const asked = heldCalls()
    const inFlight = rpc('/one', coreKey, 'eth_getBalance', [address(1), 'latest'])
    ws.socket.send(JSON.stringify(rpcBody('eth_getBalance', [address(2), 'latest'], 7)))
    await until(() => heldCalls() >= asked + 2, 'both held calls')

    writeConfig({
      ...base(),
      networks: [
        { name: 'one', chainId: 31337, upstreams: [{ url: node.url, name: 'direct' }] },
        { name: 'two', chainId: 31337, upstreams: [{ url: node.url, name: 'second' }] },
      ],
      plans: { developer: { dailyCredits: 100 } },
    })
    const reloaded = await hangUp()
    assert.deepEqual(reloaded?.networks, { added: ['two'], removed: [], rebuilt: ['one'] })
    assert.deepEqual(reloaded?.changed, ['networks', 'plans.developer.dailyCredits'])

    // the socket on the old network takes no new call: answered at once, while its own call waits
    ws.socket.send(JSON.stringify(rpcBody('eth_chainId', [], 8)))
    await until(() => ws.messages.some((message) => message.id === 8), 'the refused call answered')
    assert.deepEqual(
      ws.messages.find((message) => message.id === 8)?.error?.message,
      'network reconfigured, reconnect',
    )
    assert.ok(!ws.messages.some((message) => message.id === 7), 'its call in flight is not cut')

    slow.release()
    const answer = await inFlight
    assert.equal(answer.status, 200, answer.text)
    assert.equal((answer.json as { result: string }).result, '0x0', 'answered by the old upstream')
    // then the socket's own call is answered, and only then is it closed
    assert.deepEqual(await ws.closed, { code: 1001, reason: 'network reconfigured, reconnect' })
    assert.equal(ws.messages.find((message) => message.id === 7)?.result, '0x0')

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
    // the old network stopped once its calls were done, long before its cap
    await until(() => logged('a replaced network stopped').length > 0, 'the old network stopped')

    // 100 credits a day now: one eth_blockNumber (80) and no second
    assert.equal((await rpc('/two', developerKey, 'eth_blockNumber')).status, 200)
    assert.equal((await rpc('/two', developerKey, 'eth_blockNumber')).status, 402)
  })

  it('a port change is refused with one line naming it; the rest of the file is taken', async () => {
    const networks = [{ name: 'one', chainId: 31337, upstreams: [{ url: node.url, name: 'direct' }] }]
    writeConfig({ ...base(), networks })
    await hangUp()
    const newPort = await freePort()
    const refusedBefore = logged('config reload: these keys need a restart').length
    writeConfig({ ...base(), server: { host: '127.0.0.1', port: newPort, maxBatchSize: 2 }, networks })
    const reloaded = await hangUp()
    const refusals = logged('config reload: these keys need a restart').slice(refusedBefore)
    assert.equal(refusals.length, 1)
    assert.deepEqual(refusals[0]?.keys, ['server.port'])
    assert.deepEqual(reloaded?.networks, { added: [], removed: [], rebuilt: [] })
    // still on the old port, not on the new one
    assert.equal((await rpc('/one', coreKey, 'eth_blockNumber')).status, 200)
    await assert.rejects(fetch(`http://127.0.0.1:${newPort}/readyz`))
    // server.maxBatchSize is live: a batch of 3 is refused now
    const batch = await postJson(`http://127.0.0.1:${port}/one/v3/${coreKey}`, [
      rpcBody('eth_chainId', [], 1),
      rpcBody('eth_chainId', [], 2),
      rpcBody('eth_chainId', [], 3),
    ])
    assert.match(batch.text, /batch/i)
  })

  it('an invalid file is refused whole, naming the wrong keys; the gateway serves on as it was', async () => {
    const reloads = async () => {
      const metrics = await readMetrics(`http://127.0.0.1:${port}`)
      const count = (result: string) => metrics.value('tollgate_config_reloads_total', { result })
      return { applied: count('applied'), invalid: count('invalid') }
    }
    const before = await reloads()
    assert.ok(before.applied !== undefined && before.invalid !== undefined, 'reloads counted')
    const refusedBefore = logged('config reload refused').length
    writeConfig({ ...base(), networks: [{ name: 'Bad Name', chainId: 0, upstreams: [] }] })
    gateway.child.kill('SIGHUP')
    await until(() => logged('config reload refused').length > refusedBefore, 'the refusal logged')
    const refusal = logged('config reload refused')[refusedBefore]
    assert.match(refusal?.msg ?? '', /networks\.0\.name/)
    assert.match(refusal?.msg ?? '', /networks\.0\.chainId/)
    assert.equal((await rpc('/one', coreKey, 'eth_chainId')).status, 200)
    assert.deepEqual(await reloads(), { applied: before.applied, invalid: before.invalid + 1 })
    const loadedAt = (await readMetrics(`http://127.0.0.1:${port}`)).value(
      'tollgate_config_loaded_timestamp_seconds',
    )
    assert.ok((loadedAt ?? 0) > 0, `tollgate_config_loaded_timestamp_seconds: ${loadedAt}`)
  })

  it('a rebuild that changes only upstreams.timeoutMs: the Gas API and WebSocket upgrades answer throughout, the fee window carried over', async () => {
    const networks = [{ name: 'one', chainId: 31337, upstreams: [{ url: node.url, name: 'direct' }] }]
    writeConfig({ ...base(6_000), networks })
    await hangUp()
    const gas = `http://127.0.0.1:${port}/v3/${customKey}/networks/31337/baseFeePercentile`
    await until(async () => (await fetch(gas)).status === 200, 'the fee window loaded')
    // back to back while the reload runs: every answer and every upgrade is looked at
    const statuses: number[] = []
    const upgrades: string[] = []
    let polling = true
    const poll = (async () => {
      while (polling) {
        const response = await fetch(gas)
        statuses.push(response.status)
        await response.arrayBuffer()
        try {
          const opened = await openSocket(`ws://127.0.0.1:${port}/one/ws/v3/${customKey}`)
          opened.socket.close()
          upgrades.push('open')
        } catch (err) {
          upgrades.push((err as Error).message)
        }
      }
    })()
    writeConfig({ ...base(7_000), networks })
    const reloaded = await hangUp()
    assert.deepEqual(reloaded?.networks, { added: [], removed: [], rebuilt: ['one'] })
    // and a while after it, as the new indexer takes over
    const seen = statuses.length
    await until(() => statuses.length >= seen + 20, 'answers after the reload')
    polling = false
    await poll
    assert.deepEqual(
      [...new Set(statuses)],
      [200],
      'never 400 (no indexer) nor 503 (loading) around the rebuild',
    )
    assert.deepEqual([...new Set(upgrades)], ['open'], 'every upgrade taken')
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
