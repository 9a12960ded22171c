import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { type Anvil, startAnvil } from '../src/devnet/startAnvil.ts'
import { exited, type GatewayProcess, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { openSocket } from './helpers/openSocket.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type CountingProxy, startCountingProxy, type Tally } from './helpers/startCountingProxy.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { createTestPrefix, type RedisServer, startRedisServer, type TestPrefix } from './helpers/testRedis.ts'
import { until } from './helpers/until.ts'

// Three gateways in one fleet (one Redis, the same network), each through a counting proxy of its own
// in front of one anvil: the node hears head polls from the lease holder only, and every instance
// follows the chain (eth_blockNumber, newHeads, its cache through a reorg and a rollback); when the
// holder stops another takes over, and with Redis away every instance polls itself.

type Block = { hash: string; number: string } | null
type Notification = { method?: string; params?: { result?: { number?: string; hash?: string } } }

const hex = (number: number) => `0x${number.toString(16)}`
/** The head tracker's own poll (createHealthProber's body): what the node is asked on the head's rhythm. */
const headPollMarker = '"params":["latest",false]'

async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const answer = await postJson(url, rpcBody(method, params))
  assert.equal(answer.status, 200, answer.text)
  const json = answer.json as { result?: unknown; error?: unknown }
  assert.equal(json.error, undefined, answer.text)
  return json.result
}

type Instance = { gateway: TestGateway; proxy: CountingProxy; heads: Notification[]; polls: Tally }

/** A gateway in the fleet, through a proxy of its own, with a newHeads subscription open on it. */
async function startInstance(anvil: Anvil, redis: { url: string; keyPrefix: string }): Promise<Instance> {
  const proxy = await startCountingProxy(anvil.url)
  const gateway = await startTestGateway({
    config: {
      redis,
      upstreams: { headPollMs: 250 },
      // the same upstream on every instance, by name (each one's URL is its own proxy's)
      networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: proxy.url, name: 'anvil' }] }],
    },
  })
  const socket = await openSocket(gateway.endpoint.replace('http', 'ws').replace('/v3/', '/ws/v3/'))
  socket.socket.send(JSON.stringify(rpcBody('eth_subscribe', ['newHeads'], 1)))
  await until(() => socket.messages.some((message) => message.id === 1), 'the newHeads subscription')
  const instance: Instance = {
    gateway,
    proxy,
    heads: socket.messages as Notification[],
    polls: proxy.watch(headPollMarker),
  }
  const close = gateway.close
  gateway.close = async () => {
    socket.socket.close()
    await close()
    await proxy.close()
  }
  return instance
}

const notifiedHashes = (instance: Instance) =>
  instance.heads.flatMap((message) =>
    message.method === 'eth_subscription' && message.params?.result?.hash ? [message.params.result.hash] : [],
  )

/** Until every instance answers the node's head as eth_blockNumber and was notified of its block. */
async function untilAllFollow(anvil: Anvil, instances: Instance[], what: string): Promise<Block> {
  const head = (await rpc(anvil.url, 'eth_getBlockByNumber', ['latest', false])) as Block
  assert.ok(head)
  for (const instance of instances) {
    await until(
      async () => (await rpc(instance.gateway.endpoint, 'eth_blockNumber')) === head.number,
      `${what}: eth_blockNumber of every instance`,
    )
    await until(() => notifiedHashes(instance).includes(head.hash), `${what}: newHeads of every instance`)
  }
  return head
}

/** Fresh tallies of each instance's head polls, from now on. */
function watchPolls(instances: Instance[]): void {
  for (const instance of instances) instance.polls = instance.proxy.watch(headPollMarker)
}

const pollers = (instances: Instance[]) => instances.filter((instance) => instance.polls.sent > 0)

async function mineOne(anvil: Anvil, instances: Instance[], what: string): Promise<Block> {
  await rpc(anvil.url, 'evm_mine')
  return untilAllFollow(anvil, instances, what)
}

describe('three gateways in one fleet: one polls the head, the others follow', () => {
  let anvil: Anvil
  let prefix: TestPrefix
  let instances: Instance[] = []

  before(async () => {
    anvil = await startAnvil()
    await rpc(anvil.url, 'anvil_mine', [hex(8)])
    prefix = createTestPrefix()
    for (let index = 0; index < 3; index++)
      instances.push(await startInstance(anvil, { url: prefix.url, keyPrefix: prefix.keyPrefix }))
    await mineOne(anvil, instances, 'the start')
  })
  after(async () => {
    for (const instance of instances) await instance.gateway.close()
    await anvil?.stop()
    await prefix?.remove()
  })

  it('new blocks reach every instance; the node hears head polls from one only', async () => {
    // a newcomer may poll until it heard the holder's first report: counted from a block on
    await mineOne(anvil, instances, 'a first block')
    watchPolls(instances)
    for (let block = 0; block < 6; block++) await mineOne(anvil, instances, `block ${block}`)
    assert.equal(
      pollers(instances).length,
      1,
      `head polls by instance: ${instances.map((each) => each.polls.sent)}`,
    )
  })

  it('a reorg and a rollback reach all three, their caches dropping what the chain left', async () => {
    const [from] = (await rpc(anvil.url, 'eth_accounts')) as string[]
    const head = (await rpc(anvil.url, 'eth_getBlockByNumber', ['latest', false])) as Block
    assert.ok(head)
    const number = Number(head.number)
    // each instance keeps the block below the head, then the chain leaves it
    for (const instance of instances)
      assert.deepEqual(
        await rpc(instance.gateway.endpoint, 'eth_getBlockByNumber', [hex(number - 1), false]),
        {
          ...((await rpc(anvil.url, 'eth_getBlockByNumber', [hex(number - 1), false])) as object),
        },
      )
    await rpc(anvil.url, 'anvil_reorg', [2, [[{ from, to: from, value: '0x1' }, 0]]])
    const replaced = (await rpc(anvil.url, 'eth_getBlockByNumber', [hex(number - 1), false])) as Block
    assert.notEqual(replaced?.hash, head.hash)
    const newHead = await untilAllFollow(anvil, instances, 'the reorg')
    assert.notEqual(newHead?.hash, head.hash)
    for (const instance of instances)
      await until(async () => {
        const kept = (await rpc(instance.gateway.endpoint, 'eth_getBlockByNumber', [
          hex(number - 1),
          false,
        ])) as Block
        return kept?.hash === replaced?.hash
      }, 'every instance to answer the new branch')

    // a rollback: the two newest blocks go, and with them what the instances kept of them
    await rpc(anvil.url, 'anvil_rollback', [2])
    for (const instance of instances) {
      await until(
        async () =>
          (await rpc(instance.gateway.endpoint, 'eth_getBlockByNumber', [hex(number - 1), false])) === null,
        'every instance to drop the block the rollback left',
      )
      await until(
        async () => (await rpc(instance.gateway.endpoint, 'eth_blockNumber')) === hex(number - 2),
        'every instance to answer the lower head',
      )
    }
    await mineOne(anvil, instances, 'a block after the rollback')
  })

  it('the holder stops: another takes over and heads keep flowing, still polled by one', async () => {
    await mineOne(anvil, instances, 'a block before')
    watchPolls(instances)
    await mineOne(anvil, instances, 'a block to find the holder')
    const [holder] = pollers(instances)
    assert.ok(holder, 'one instance polls')
    await holder.gateway.close()
    instances = instances.filter((instance) => instance !== holder)
    watchPolls(instances)
    for (let block = 0; block < 4; block++)
      await mineOne(anvil, instances, `block ${block} after the holder left`)
    assert.equal(
      pollers(instances).length,
      1,
      `head polls by instance: ${instances.map((each) => each.polls.sent)}`,
    )
  })
})

describe('a fleet whose Redis goes away: every instance polls itself, no head lost', () => {
  let anvil: Anvil
  let redis: RedisServer
  const instances: Instance[] = []

  before(async () => {
    anvil = await startAnvil()
    redis = await startRedisServer()
    for (let index = 0; index < 2; index++)
      instances.push(await startInstance(anvil, { url: redis.url, keyPrefix: 'tollgate-test-fleet:' }))
    await mineOne(anvil, instances, 'the start')
  })
  after(async () => {
    for (const instance of instances) await instance.gateway.close()
    await anvil?.stop()
    await redis?.stop()
  })

  it('polled by one with Redis, by both without, by one again once it is back', async () => {
    await mineOne(anvil, instances, 'a first block')
    watchPolls(instances)
    await mineOne(anvil, instances, 'a block with Redis')
    assert.equal(pollers(instances).length, 1)
    await redis.stop()
    watchPolls(instances)
    for (let block = 0; block < 3; block++) await mineOne(anvil, instances, `block ${block} without Redis`)
    await until(() => pollers(instances).length === 2, 'both instances to poll')
    await redis.start()
    // once back, the lease is taken again and the other instance follows: a block with one poller
    await until(async () => {
      watchPolls(instances)
      await mineOne(anvil, instances, 'a block with Redis back')
      return pollers(instances).length === 1
    }, 'one instance to poll again')
  })
})

describe('the holder killed (SIGKILL): its lease expires and another instance takes over', () => {
  let anvil: Anvil
  let prefix: TestPrefix
  let dir: string
  let holder: GatewayProcess | undefined
  let holderProxy: CountingProxy
  let follower: Instance

  before(async () => {
    anvil = await startAnvil()
    prefix = createTestPrefix()
    holderProxy = await startCountingProxy(anvil.url)
    dir = mkdtempSync(join(tmpdir(), 'tollgate-fleet-'))
    const configFile = join(dir, 'tollgate.yaml')
    writeFileSync(
      configFile,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        storage: { sqlite: join(dir, 'tollgate.db') },
        redis: { url: prefix.url, keyPrefix: prefix.keyPrefix },
        upstreams: { headPollMs: 250 },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: holderProxy.url, name: 'anvil' }] }],
        gas: { enabled: false },
        log: { level: 'warn' },
      }),
    )
    // started first: it takes the lease
    holder = await startGatewayProcess(['start', '--config', configFile])
    await until(async () => (await prefix.redis.keys(`${prefix.keyPrefix}lease:*`)).length === 1, 'the lease')
    follower = await startInstance(anvil, { url: prefix.url, keyPrefix: prefix.keyPrefix })
    await mineOne(anvil, [follower], 'the start')
  })
  after(async () => {
    if (holder && holder.child.exitCode === null) {
      holder.child.kill('SIGKILL')
      await exited(holder.child)
    }
    await follower?.gateway.close()
    await holderProxy?.close()
    await anvil?.stop()
    await prefix?.remove()
    rmSync(dir, { recursive: true, force: true })
  })

  it('heads keep flowing to the follower, which polls once the lease expired', async () => {
    const holderPolls = holderProxy.watch(headPollMarker)
    watchPolls([follower])
    await mineOne(anvil, [follower], 'a block from the holder')
    assert.ok(holderPolls.sent > 0)
    assert.equal(follower.polls.sent, 0, 'the follower polls nothing while the holder lives')
    const child = (holder as GatewayProcess).child
    child.kill('SIGKILL')
    await exited(child)
    for (let block = 0; block < 3; block++) await mineOne(anvil, [follower], `block ${block} after the kill`)
    assert.ok(follower.polls.sent > 0, 'the follower took over')
  })
})
