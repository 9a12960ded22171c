import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { describe, it } from 'node:test'
import { pino } from 'pino'
import { createFakeTimers } from '../../test/helpers/createFakeTimers.ts'
import type { KeyRegistry } from '../auth/createKeyRegistry.ts'
import type { KeyAdmin } from '../auth/keyAdmin.ts'
import { type Config, configSchema, type NetworkConfig } from '../config/configSchema.ts'
import { ConfigError } from '../config/loadConfig.ts'
import { CallCount } from '../failsafe/CallCount.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'
import type { NetworkServices } from './createNetworkServices.ts'
import type { LiveNetwork, NetworkStarter } from './createNetworkStarter.ts'
import { createReloader } from './createReloader.ts'
import { createRequestSettings, type RequestSettingsParts } from './createRequestSettings.ts'

const timeoutMs = 6_000
const redisTimeoutMs = 500
const requestTimeoutMs = 20_000
/** The longest an eth_sendRawTransactionSync's node may wait for the receipt, beyond timeoutMs. */
const receiptWaitMs = 60_000
/**
 * A replaced network's cap: a body still being sent (requestTimeoutMs, as Node checks it each
 * second), the bank's wait, its timeout and a receipt's wait, and the 1 s grace.
 */
const capMs = requestTimeoutMs + 1_000 + redisTimeoutMs + timeoutMs + receiptWaitMs + 1_000

const configOf = (
  names: string[],
  plans: Record<string, unknown> = {},
  host = 'old',
  extra: Record<string, unknown> = {},
): Config =>
  configSchema.parse({
    server: { requestTimeoutMs },
    upstreams: { timeoutMs },
    metering: { redisTimeoutMs },
    networks: names.map((name) => ({
      name,
      chainId: 1,
      upstreams: [{ url: `http://${name}.${host}.example` }],
    })),
    plans,
    ...extra,
  })

const devnet: NetworkConfig = configSchema.parse({
  networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: 'http://127.0.0.1:8546' }] }],
}).networks[0] as NetworkConfig

/** A reloader over stand-ins that record what it does, on fake timers; `setPlans` may fail. */
function setup(
  options: {
    names?: string[]
    embedded?: NetworkConfig
    failPlans?: boolean
    requestTimeoutMs?: number
  } = {},
) {
  const timers = createFakeTimers()
  const events: string[] = []
  const lines: { msg: string; [field: string]: unknown }[] = []
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()))
        done()
      },
    }),
  )
  let warmUp: Promise<void> = Promise.resolve()
  const liveOf = (config: NetworkConfig): LiveNetwork => {
    const network = {
      name: config.name,
      chainId: config.chainId,
      timeoutMs,
      calls: new CallCount(),
      head: { shown: 0n, show: () => undefined },
    } as unknown as Network
    return {
      network,
      config,
      async stop() {
        events.push(`stop ${config.name}`)
      },
    }
  }
  const starter: NetworkStarter = {
    async start(_config, networkConfigs) {
      await warmUp
      return networkConfigs.map(liveOf)
    },
    close: async () => {},
  }
  // the embedded devnet runs when the config has `devnet`
  const initial = configOf(options.names ?? ['one'], {}, 'old', options.embedded ? { devnet: {} } : {})
  if (options.requestTimeoutMs !== undefined) initial.server.requestTimeoutMs = options.requestTimeoutMs
  const live = [...initial.networks, ...(options.embedded ? [options.embedded] : [])].map(liveOf)
  let registered: Network[] = live.map((each) => each.network)
  let registeredDefault: string | undefined
  const services = {
    add: (each: LiveNetwork) => events.push(`add ${each.network.name}`),
    leave: (network: Network) => events.push(`leave ${network.name}`),
    retire: (network: Network) => events.push(`retire ${network.name}`),
  } as unknown as NetworkServices
  // the real settings, over stand-in parts
  const settings = createRequestSettings(
    {
      rpc: {},
      gas: { indexers: new Map() },
      upgrade: {},
      now: timers.now,
    } as unknown as RequestSettingsParts,
    initial,
  )
  const reloader = createReloader(initial, {
    log,
    starter,
    registry: {
      replace: (networks: Network[], defaultName: string | undefined) => {
        registered = networks
        registeredDefault = defaultName
      },
    } as unknown as NetworkRegistry,
    live,
    embedded: options.embedded,
    services,
    keys: {
      setPlans: async () => {
        events.push('keys.setPlans')
        if (options.failPlans) throw new Error('database down')
      },
    } as unknown as KeyRegistry,
    keyAdmin: { setPlans: () => events.push('keyAdmin.setPlans') } as unknown as KeyAdmin,
    settings,
    now: timers.now,
    timers,
  })
  return {
    reloader,
    timers,
    events,
    lines,
    live,
    registered: () => registered.map((network) => network.name),
    registeredDefault: () => registeredDefault,
    settings,
    holdWarmUp() {
      let release = () => {}
      warmUp = new Promise((resolve) => {
        release = resolve
      })
      return () => release()
    },
  }
}

describe('createReloader', () => {
  it('a rebuilt network takes the new calls at once; the old one stops when its last call is done', async () => {
    const { reloader, timers, events, live, registered } = setup()
    const old = live[0] as LiveNetwork
    old.network.calls.enter()
    const next = configOf(['one'], {}, 'new')
    const result = await reloader.reload(next)
    assert.deepEqual(result.networks, { added: [], removed: [], rebuilt: ['one'] })
    assert.deepEqual(registered(), ['one'])
    assert.notEqual(live[0], old, 'the new network is the live one')
    assert.deepEqual(events, ['add one', 'leave one'], 'the new one in place before the old one leaves')
    await timers.advance(capMs - 1)
    assert.ok(!events.includes('stop one'), 'not while a call is on it')
    old.network.calls.leave()
    await timers.advance(0)
    assert.deepEqual(events.slice(2), ['retire one', 'stop one'])
    assert.equal(timers.pending(), 0, 'no timer left behind')
  })

  it("a network with calls that never end stops at the cap: a body sent, the bank wait, timeoutMs and a receipt's wait, a grace", async () => {
    const { reloader, timers, events, live } = setup({ names: ['one', 'two'] })
    const two = live[1] as LiveNetwork
    two.network.calls.enter()
    const result = await reloader.reload(configOf(['one']))
    assert.deepEqual(result.networks, { added: [], removed: ['two'], rebuilt: [] })
    await timers.advance(capMs - 1)
    assert.ok(!events.includes('stop two'))
    await timers.advance(1)
    assert.deepEqual(events, ['leave two', 'retire two', 'stop two'])
  })

  it('with no limit on sending a body (requestTimeoutMs 0), the cap allows a minute for it', async () => {
    const { reloader, timers, events, live } = setup({ names: ['one', 'two'], requestTimeoutMs: 0 })
    const two = live[1] as LiveNetwork
    two.network.calls.enter()
    // a server.* key needs a restart: the running value is what counts
    await reloader.reload(configOf(['one']))
    const unlimitedCapMs = 60_000 + 1_000 + redisTimeoutMs + timeoutMs + receiptWaitMs + 1_000
    await timers.advance(unlimitedCapMs - 1)
    assert.ok(!events.includes('stop two'))
    await timers.advance(1)
    assert.ok(events.includes('stop two'))
  })

  it('a call that looked the network up just before the swap is waited for (it counts itself by the next turn)', async () => {
    const { reloader, timers, events, live } = setup({ names: ['one', 'two'] })
    const two = live[1] as LiveNetwork
    await reloader.reload(configOf(['one']))
    two.network.calls.enter()
    await timers.advance(0)
    assert.ok(!events.includes('stop two'))
    two.network.calls.leave()
    await timers.advance(0)
    assert.ok(events.includes('stop two'))
  })

  it('the embedded devnet is kept by name, not by position, whatever the config does', async () => {
    const { reloader, registered, events } = setup({ names: ['one'], embedded: devnet })
    await reloader.reload(configOf(['one', 'two']))
    assert.deepEqual(registered(), ['one', 'two', 'devnet'])
    // one removed: the devnet still stays, and 'two' is not taken for it
    const result = await reloader.reload(configOf(['two']))
    assert.deepEqual(registered(), ['two', 'devnet'])
    assert.deepEqual(result.networks, { added: [], removed: ['one'], rebuilt: [] })
    assert.ok(!events.includes('leave devnet'))
  })

  it('plans that cannot be read into the keys (database down) still commit the reload, logged as such', async () => {
    const { reloader, lines, registered } = setup({ names: ['one'], failPlans: true })
    const next = configOf(['one', 'two'], { core: { dailyCredits: 7 } })
    const result = await reloader.reload(next)
    assert.deepEqual(result.changed, ['networks', 'plans.core.dailyCredits'])
    assert.equal(reloader.config().plans.core.dailyCredits, 7, 'the config record is the running one')
    assert.deepEqual(registered(), ['one', 'two'])
    assert.ok(lines.some((line) => line.msg.startsWith('config reload: the new plans are in place')))
    // the next reload computes from the committed config: nothing changed
    const again = await reloader.reload(configOf(['one', 'two'], { core: { dailyCredits: 7 } }))
    assert.deepEqual(again.networks, { added: [], removed: [], rebuilt: [] })
  })

  it("a plan's maxCallsInFlight changed: the settings are swapped, the keys' plans set", async () => {
    const { reloader, settings } = setup()
    const before = settings.current()
    const result = await reloader.reload(configOf(['one'], { core: { maxCallsInFlight: 4 } }))
    assert.deepEqual(result.changed, ['plans.core.maxCallsInFlight'])
    assert.deepEqual(
      [before.rpc.maxCallsInFlight('core'), settings.current().rpc.maxCallsInFlight('core')],
      [32, 4],
    )
    assert.equal(settings.current().upgrade.maxCallsInFlight('core'), 4)
  })

  it('live settings are built again and swapped in whole: the ones a request holds are never changed', async () => {
    const { reloader, settings } = setup()
    const before = settings.current()
    await reloader.reload(
      configOf(['one'], {}, 'old', { server: { maxBatchSize: 7 }, gas: { historyBlocks: 9 } }),
    )
    const after = settings.current()
    assert.notEqual(after, before)
    assert.deepEqual(
      [after.rpc.maxBatchSize, after.gas.maxBatchSize, after.upgrade.maxBatchSize, after.gas.historyBlocks],
      [7, 7, 7, 9],
    )
    assert.deepEqual(
      [before.rpc.maxBatchSize, before.gas.historyBlocks],
      [1000, 500],
      'the old ones untouched',
    )
    assert.equal(after.rpc.authFailures, before.rpc.authFailures, 'auth unchanged: the same limiter')
    assert.equal(after.upgrade.verifyJwt, before.upgrade.verifyJwt)
    await reloader.reload(
      configOf(['one'], {}, 'old', {
        server: { maxBatchSize: 7 },
        gas: { historyBlocks: 9 },
        auth: { failureBurst: 3 },
      }),
    )
    // auth changed: a new limiter and verifier, everywhere
    const remade = settings.current()
    assert.notEqual(remade.rpc.authFailures, after.rpc.authFailures)
    assert.notEqual(remade.upgrade.verifyJwt, after.upgrade.verifyJwt)
    assert.equal(remade.gas.authFailures, remade.rpc.authFailures)
    // nothing live changed: the same settings
    const unchanged = settings.current()
    await reloader.reload(
      configOf(['one', 'two'], {}, 'old', {
        server: { maxBatchSize: 7 },
        gas: { historyBlocks: 9 },
        auth: { failureBurst: 3 },
      }),
    )
    assert.equal(settings.current(), unchanged)
  })

  it('the registry is given the default network: the first listed stays it as networks are added', async () => {
    const { reloader, registeredDefault } = setup({ names: ['one'] })
    await reloader.reload(configOf(['one', 'two']))
    assert.equal(registeredDefault(), 'one')
    await reloader.reload(configOf(['two', 'one'], {}, 'old', { defaultNetwork: 'one' }))
    assert.equal(registeredDefault(), 'one')
  })

  it('with the embedded devnet, the devnet stays the default whatever networks are added', async () => {
    const { reloader, registeredDefault } = setup({ names: [], embedded: devnet })
    await reloader.reload(configOf(['one'], {}, 'old', { devnet: {} }))
    assert.equal(registeredDefault(), 'devnet')
  })

  it('a file that would move the un-prefixed URLs without naming it: refused, nothing changed; named: moved and logged', async () => {
    const { reloader, registered, lines, events } = setup({ names: ['one', 'two'] })
    const running = reloader.config()
    await assert.rejects(reloader.reload(configOf(['two'])), (err) => {
      assert.ok(err instanceof ConfigError)
      assert.match(err.message, /serve network 'one'; this file would move them to 'two'/)
      return true
    })
    assert.equal(reloader.config(), running)
    assert.deepEqual(registered(), ['one', 'two'])
    assert.deepEqual(events, [], 'no network started, none left')
    // the next reload is not held up by the refused one
    const moved = await reloader.reload(configOf(['two'], {}, 'old', { defaultNetwork: 'two' }))
    assert.deepEqual(moved.networks, { added: [], removed: ['one'], rebuilt: [] })
    const warning = lines.find((line) => line.msg.startsWith('config reload: the un-prefixed URLs'))
    assert.deepEqual([warning?.from, warning?.to], ['one', 'two'])
  })

  it('close() waits for a reload under way; networks it warmed never take a call, and draining ones stop at once', async () => {
    const { reloader, timers, events, live, registered, holdWarmUp } = setup({ names: ['one', 'two'] })
    ;(live[1] as LiveNetwork).network.calls.enter()
    await reloader.reload(configOf(['one']))
    const release = holdWarmUp()
    const reloading = reloader.reload(configOf(['one', 'three']))
    await timers.advance(0)
    let closed = false
    const closing = reloader.close().then(() => {
      closed = true
    })
    await timers.advance(0)
    assert.equal(closed, false, 'waits for the reload under way')
    release()
    await assert.rejects(reloading, /stopping/)
    await closing
    assert.deepEqual(registered(), ['one'], 'the network warmed meanwhile was never put in place')
    assert.ok(events.includes('stop three'))
    assert.ok(events.includes('stop two'), 'the draining network stopped at once')
    assert.equal(timers.pending(), 0)
  })
})
