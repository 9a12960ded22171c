import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { stringify } from 'yaml'
import { type Anvil, startAnvil } from '../src/devnet/startAnvil.ts'
import { bin, exited, type GatewayProcess, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { freePort } from './helpers/localProcesses.ts'
import { openSocket } from './helpers/openSocket.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { readMetrics } from './helpers/readMetrics.ts'
import { until } from './helpers/until.ts'

const run = promisify(execFile)

type LogLine = { msg: string; [field: string]: unknown }

/** pino's JSON lines whose message starts with `message`, from a process's output so far. */
function logLines(output: string, message: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)
    .filter((line) => line.msg.startsWith(message))
}

/** A subscription's notification, as a client reads it. */
type Notification = { method?: string; params?: { subscription: string; result: { number: string } } }

/**
 * A gateway and the client of its un-prefixed URLs: a WebSocket on /ws/v3/KEY subscribed to newHeads,
 * and POSTs on /v3/KEY. Reload after reload, they must stay on the network they started on.
 */
function createRig(dir: string) {
  const configFile = join(dir, 'tollgate.yaml')
  let gateway: GatewayProcess
  let port = 0
  const logged = (message: string) => logLines(gateway.output(), message)
  return {
    configFile,
    get gateway() {
      return gateway
    },
    logged,
    async start(config: (port: number) => unknown, args: string[] = [], ready?: RegExp) {
      port = await freePort()
      writeFileSync(configFile, stringify(config(port)))
      gateway = await startGatewayProcess(['start', '--config', configFile, ...args], ready && { ready })
    },
    write(config: (port: number) => unknown) {
      writeFileSync(configFile, stringify(config(port)))
    },
    post: (path: string, key: string, method: string) =>
      postJson(`http://127.0.0.1:${port}${path}/v3/${key}`, rpcBody(method)),
    async chainId(path: string, key: string): Promise<number> {
      const answer = await postJson(`http://127.0.0.1:${port}${path}/v3/${key}`, rpcBody('eth_chainId'))
      assert.equal(answer.status, 200, answer.text)
      return Number((answer.json as { result: string }).result)
    },
    socketUrl: (key: string) => `ws://127.0.0.1:${port}/ws/v3/${key}`,
    /** SIGHUP, and the next line that says what became of it (`config reloaded` or a refusal). */
    async hangUp(): Promise<LogLine> {
      return (await this.hangUpSeen(1))[0] as LogLine
    },
    /** SIGHUP, and the next `lines` lines that say what became of it (with --workers: one per worker). */
    async hangUpSeen(lines: number): Promise<LogLine[]> {
      const outcomes = () =>
        logLines(gateway.output(), 'config reload').filter(
          (line) => line.msg.startsWith('config reloaded') || line.msg.startsWith('config reload refused'),
        )
      const count = outcomes().length
      gateway.child.kill('SIGHUP')
      await until(() => outcomes().length >= count + lines, 'the reload logged')
      return outcomes().slice(count)
    },
    async stop() {
      if (!gateway) return
      const exit = exited(gateway.child)
      gateway.child.kill('SIGTERM')
      assert.equal(await exit, 0)
    },
    kill() {
      if (gateway && gateway.child.exitCode === null) gateway.child.kill('SIGKILL')
    },
  }
}

/** A newHeads subscription on `url`, and a way to mine a block and wait for the socket to be sent its head. */
async function subscribeHeads(url: string) {
  const ws = await openSocket(url)
  ws.socket.send(JSON.stringify(rpcBody('eth_subscribe', ['newHeads'], 1)))
  await until(() => ws.messages.some((message) => message.id === 1), 'the subscription')
  const subscription = ws.messages.find((message) => message.id === 1)?.result
  assert.equal(typeof subscription, 'string', JSON.stringify(ws.messages))
  const heads = () =>
    (ws.messages as Notification[])
      .filter((message) => message.params?.subscription === subscription)
      .map((message) => Number(message.params?.result.number))
  let open = true
  void ws.closed.then(() => {
    open = false
  })
  return {
    ws,
    isOpen: () => open && ws.socket.readyState === ws.socket.OPEN,
    /** Mines a block on the node at `nodeUrl` and waits for the socket to be sent it. */
    async headFrom(nodeUrl: string): Promise<number> {
      const mined = await postJson(nodeUrl, rpcBody('evm_mine'))
      assert.equal(mined.status, 200, mined.text)
      const block = await postJson(nodeUrl, rpcBody('eth_blockNumber'))
      const number = Number((block.json as { result: string }).result)
      await until(() => heads().includes(number), `head ${number} on the socket`)
      return number
    },
  }
}

describe('SIGHUP never moves a URL: the un-prefixed /v3/KEY and /ws/v3/KEY keep their network', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-reload-default-'))
  const rig = createRig(dir)
  /** Network one's node (chain 31337) and network two's (chain 31338): told apart by chain id. */
  let nodeOne: Anvil
  let nodeTwo: Anvil
  let key = ''
  const one = () => ({ name: 'one', chainId: 31337, upstreams: [{ url: nodeOne.url, ws: nodeOne.wsUrl }] })
  const two = (name = 'second') => ({
    name: 'two',
    chainId: 31338,
    upstreams: [{ url: nodeTwo.url, ws: nodeTwo.wsUrl, name }],
  })
  const config =
    (networks: unknown[], extra: Record<string, unknown> = {}) =>
    (port: number) => ({
      server: { host: '127.0.0.1', port },
      storage: { sqlite: join(dir, 'tollgate.db') },
      upstreams: { headPollMs: 200 },
      log: { level: 'info' },
      networks,
      ...extra,
    })

  before(async () => {
    ;[nodeOne, nodeTwo] = await Promise.all([startAnvil({ chainId: 31337 }), startAnvil({ chainId: 31338 })])
    writeFileSync(rig.configFile, stringify(config([one()])(8545)))
    const created = await run(process.execPath, [
      bin,
      'keys',
      'create',
      '--plan',
      'core',
      '--json',
      '--config',
      rig.configFile,
    ])
    key = (JSON.parse(created.stdout) as { key: string }).key
    await rig.start(config([one()]))
  })
  after(async () => {
    rig.kill()
    await Promise.all([nodeOne?.stop(), nodeTwo?.stop()])
    rmSync(dir, { recursive: true, force: true })
  })

  it('adding, changing and removing a second network: the first keeps its URLs, and its socket stays open with heads flowing', async () => {
    const socket = await subscribeHeads(rig.socketUrl(key))
    assert.equal(await rig.chainId('', key), 31337)
    await socket.headFrom(nodeOne.url)

    // added, with a plan's numbers changed: every key of the plan is checked again, its sockets too
    rig.write(config([one(), two()], { plans: { core: { dailyCredits: 2_000_000 } } }))
    const added = await rig.hangUp()
    assert.deepEqual(added.networks, { added: ['two'], removed: [], rebuilt: [] }, JSON.stringify(added))
    assert.equal(await rig.chainId('', key), 31337, 'the un-prefixed URL still serves network one')
    assert.equal(await rig.chainId('/two', key), 31338, 'the new network at its prefix')
    assert.equal(await rig.chainId('/one', key), 31337)
    await socket.headFrom(nodeOne.url)
    assert.ok(socket.isOpen(), 'the socket on network one is still open')

    rig.write(config([one(), two('renamed')], { plans: { core: { dailyCredits: 2_500_000 } } }))
    const changed = await rig.hangUp()
    assert.deepEqual(changed.networks, { added: [], removed: [], rebuilt: ['two'] })
    assert.equal(await rig.chainId('', key), 31337)
    await socket.headFrom(nodeOne.url)

    rig.write(config([one()]))
    const removed = await rig.hangUp()
    assert.deepEqual(removed.networks, { added: [], removed: ['two'], rebuilt: [] })
    assert.equal(await rig.chainId('', key), 31337)
    assert.equal((await rig.post('/two', key, 'eth_chainId')).status, 404)
    await socket.headFrom(nodeOne.url)
    assert.ok(socket.isOpen(), 'open through every reload')
    socket.ws.socket.close()
  })

  it('a file that would move the un-prefixed URLs is refused whole unless defaultNetwork names the new one', async () => {
    rig.write(config([one()]))
    await rig.hangUp()
    const socket = await subscribeHeads(rig.socketUrl(key))

    // network two listed first: the first network listed is no longer the one served
    rig.write(config([two(), one()]))
    const refused = await rig.hangUp()
    assert.match(refused.msg, /^config reload refused, the running config stays: /)
    assert.match(refused.msg, /defaultNetwork/)
    assert.match(refused.msg, /'one'/)
    assert.equal((await rig.post('/two', key, 'eth_chainId')).status, 404, 'nothing of the file taken')
    assert.equal(await rig.chainId('', key), 31337)

    // the operator keeps it where it is
    rig.write(config([two(), one()], { defaultNetwork: 'one' }))
    const kept = await rig.hangUp()
    assert.deepEqual(kept.networks, { added: ['two'], removed: [], rebuilt: [] })
    assert.equal(await rig.chainId('', key), 31337)
    await socket.headFrom(nodeOne.url)

    // network one removed, two not named: refused
    rig.write(config([two()]))
    assert.match((await rig.hangUp()).msg, /^config reload refused/)
    assert.equal(await rig.chainId('', key), 31337)
    assert.ok(socket.isOpen())

    // named: the un-prefixed URLs move, said in a warning; the socket on the network removed is told to reconnect
    const movedBefore = rig.logged('config reload: the un-prefixed URLs').length
    rig.write(config([two()], { defaultNetwork: 'two' }))
    const moved = await rig.hangUp()
    assert.deepEqual(moved.networks, { added: [], removed: ['one'], rebuilt: [] })
    const warning = rig.logged('config reload: the un-prefixed URLs').slice(movedBefore)
    assert.equal(warning.length, 1)
    assert.deepEqual([warning[0]?.from, warning[0]?.to], ['one', 'two'])
    assert.equal(await rig.chainId('', key), 31338)
    assert.deepEqual(await socket.ws.closed, { code: 1001, reason: 'network reconfigured, reconnect' })
    const reconnected = await subscribeHeads(rig.socketUrl(key))
    await reconnected.headFrom(nodeTwo.url)

    // none: the un-prefixed URLs answer 404 from then on; a socket open on them stays on its network
    rig.write(config([two()], { defaultNetwork: false }))
    assert.deepEqual((await rig.hangUp()).networks, { added: [], removed: [], rebuilt: [] })
    const unprefixed = await rig.post('', key, 'eth_chainId')
    assert.equal(unprefixed.status, 404, unprefixed.text)
    assert.equal(await rig.chainId('/two', key), 31338)
    await reconnected.headFrom(nodeTwo.url)
    assert.ok(reconnected.isOpen())
    reconnected.ws.socket.close()
  })
})

describe('the embedded devnet from a file: networks added beside it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-reload-devnet-default-'))
  const rig = createRig(dir)
  let other: Anvil
  const config =
    (networks: unknown[] | undefined = undefined) =>
    (port: number) => ({
      server: { host: '127.0.0.1', port },
      storage: { sqlite: join(dir, 'tollgate.db') },
      devnet: { seed: false, blockTimeSeconds: 0 },
      upstreams: { headPollMs: 200 },
      log: { level: 'info' },
      ...(networks ? { networks } : {}),
    })
  const demoKey = () => /Demo API key: (\S+)/.exec(rig.gateway.output())?.[1] ?? ''

  before(async () => {
    other = await startAnvil({ chainId: 31338 })
  })
  after(async () => {
    rig.kill()
    await other?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('a network added to a devnet-only file: /v3/KEY and /ws/v3/KEY stay on the devnet; the next start shows every URL', async () => {
    await rig.start(config())
    const key = demoKey()
    assert.notEqual(key, '')
    assert.ok(!rig.gateway.output().includes('URLs ('), 'one network: its un-prefixed URLs are all there is')
    const devnetNode = /devnet node: (\S+)/.exec(rig.gateway.output())?.[1] ?? ''
    const socket = await subscribeHeads(rig.socketUrl(key))
    await socket.headFrom(devnetNode)

    rig.write(config([{ name: 'sepolia', chainId: 31338, upstreams: [{ url: other.url }] }]))
    const added = await rig.hangUp()
    assert.deepEqual(added.networks, { added: ['sepolia'], removed: [], rebuilt: [] })
    assert.equal(await rig.chainId('', key), 31337)
    assert.equal(await rig.chainId('/sepolia', key), 31338)
    await socket.headFrom(devnetNode)
    assert.ok(socket.isOpen())
    socket.ws.socket.close()
    await rig.stop()

    // started on that file: the banner shows every network's URLs, and what the un-prefixed ones serve
    await rig.start(config([{ name: 'sepolia', chainId: 31338, upstreams: [{ url: other.url }] }]))
    const lines = rig.gateway.output().split('\n')
    const header = lines.indexOf('  URLs (the un-prefixed ones serve network devnet):')
    assert.notEqual(header, -1, rig.gateway.output())
    const { url } = rig.gateway
    const ws = url.replace('http', 'ws')
    assert.deepEqual(
      lines.slice(header + 1, header + 4).map((line) => line.trim().split(/\s+/)),
      [
        [`${url}/v3/<KEY>`, `${ws}/ws/v3/<KEY>`, '->', 'devnet'],
        [`${url}/sepolia/v3/<KEY>`, `${ws}/sepolia/ws/v3/<KEY>`, '->', 'sepolia'],
        [`${url}/devnet/v3/<KEY>`, `${ws}/devnet/ws/v3/<KEY>`, '->', 'devnet'],
      ],
    )
    assert.equal(await rig.chainId('', demoKey()), 31337)
    assert.equal(await rig.chainId('/sepolia', demoKey()), 31338)
    await rig.stop()
  })
})

describe('--workers 2: the primary refuses a file that would move the un-prefixed URLs, once, for every worker', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-reload-workers-default-'))
  const rig = createRig(dir)
  let nodeOne: Anvil
  let nodeTwo: Anvil
  let key = ''
  const network = (name: string, node: Anvil) => ({
    name,
    chainId: node.chainId,
    upstreams: [{ url: node.url }],
  })
  const config = (networks: unknown[]) => (port: number) => ({
    server: { host: '127.0.0.1', port },
    storage: { sqlite: join(dir, 'tollgate.db') },
    gas: { enabled: false },
    log: { level: 'info' },
    networks,
  })

  before(async () => {
    ;[nodeOne, nodeTwo] = await Promise.all([startAnvil({ chainId: 31337 }), startAnvil({ chainId: 31338 })])
    writeFileSync(rig.configFile, stringify(config([network('one', nodeOne)])(8545)))
    const created = await run(process.execPath, [
      bin,
      'keys',
      'create',
      '--plan',
      'core',
      '--json',
      '--config',
      rig.configFile,
    ])
    key = (JSON.parse(created.stdout) as { key: string }).key
  })
  after(async () => {
    rig.kill()
    await Promise.all([nodeOne?.stop(), nodeTwo?.stop()])
    rmSync(dir, { recursive: true, force: true })
  })

  it('added after the first: both workers keep /v3/KEY on it; listed first: refused by the primary alone', async () => {
    await rig.start(config([network('one', nodeOne)]), ['--workers', '2'], /listening on \S+ \(2 workers\)/)
    try {
      rig.write(config([network('one', nodeOne), network('two', nodeTwo)]))
      const reloaded = await rig.hangUpSeen(2)
      for (const line of reloaded)
        assert.deepEqual(line.networks, { added: ['two'], removed: [], rebuilt: [] })
      // both workers reloaded (above): whichever holds the connection answers the same
      for (let round = 0; round < 6; round++) {
        assert.equal(await rig.chainId('', key), 31337)
        assert.equal(await rig.chainId('/two', key), 31338)
      }

      rig.write(config([network('two', nodeTwo), network('one', nodeOne)]))
      const [refused] = await rig.hangUpSeen(1)
      assert.match(refused?.msg ?? '', /^config reload refused, the running config stays: defaultNetwork: /)
      assert.equal(refused?.pid, rig.gateway.child.pid, 'the primary says it')
      // the workers were told (the one answering the scrape counted it), and neither logged a reload
      await until(async () => {
        const metrics = await readMetrics(rig.gateway.url, { keepalive: false })
        return metrics.value('tollgate_config_reloads_total', { result: 'invalid' }) === 1
      }, 'the refusal counted')
      assert.equal(rig.logged('config reloaded').length, 2)
      assert.equal(await rig.chainId('', key), 31337)
      await rig.stop()
    } finally {
      rig.kill()
    }
  })
})
