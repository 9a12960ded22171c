import assert from 'node:assert/strict'
import { after, afterEach, describe, it } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { startTcpProxy } from '../../test/helpers/startTcpProxy.ts'
import { createTestPrefix, startRedisServer } from '../../test/helpers/testRedis.ts'
import { until } from '../../test/helpers/until.ts'
import { BalanceUnavailableError, DailyLimitError, RateLimitError } from '../errors/limitErrors.ts'
import { openSqlite } from '../store/openSqlite.ts'
import { systemClock } from './clock.ts'
import { createMeter } from './createMeter.ts'
import { createRedisBank } from './createRedisBank.ts'
import { createSqliteUsageStore } from './createSqliteUsageStore.ts'
import type { Admission, Meter, MeterSubject } from './meterTypes.ts'
import type { UsageStore } from './usageStore.ts'

const subject = (limits: Partial<MeterSubject> = {}): MeterSubject => ({
  accountId: 1,
  keyId: 10,
  accountCounter: 'account:1',
  keyCounter: 'key:10',
  accountDailyCredits: 80_000,
  accountCreditsPerSecond: 1_000_000,
  keyDailyCredits: undefined,
  keyCreditsPerSecond: undefined,
  ...limits,
})

const call = (credits = 80) => [{ method: 'eth_blockNumber', network: 'devnet', credits }]
const today = () => new Date().toISOString().slice(0, 10)

type Instance = { meter: Meter; bank: Awaited<ReturnType<typeof createRedisBank>>; store: UsageStore }

/**
 * What a test started and has not stopped (instances, proxies, Redis servers), stopped after it
 * whether it passed or not: a failed test must not leave connections that keep the file running.
 */
const running = new Map<object, () => Promise<void>>()

/** The last started first: an instance is stopped while the Redis it reports to still runs. */
async function stopLeftovers(): Promise<void> {
  const stops = [...running.values()].reverse()
  running.clear()
  for (const stop of stops) await stop()
}

/** `thing`, stopped by stopLeftovers unless the test stops it first (`forget`). */
function tracked<T extends object>(thing: T, stop: (thing: T) => Promise<void>): T {
  running.set(thing, () => stop(thing))
  return thing
}

function forget(thing: object): void {
  running.delete(thing)
}

/** One gateway instance's metering: its own usage store (an SQLite of its own) and its bank client. */
async function startInstance(
  url: string,
  keyPrefix: string,
  options: { leaseTtlMs?: number; onBankDown?: 'open' | 'closed'; store?: UsageStore; flushMs?: number } = {},
): Promise<Instance> {
  const bank = await createRedisBank({
    url,
    keyPrefix,
    leaseTtlMs: options.leaseTtlMs ?? 15_000,
    // a loaded machine must not pass for a Redis down: an exchange that times out puts the meter in
    // its onRedisDown mode, which in open mode serves past the balance as last seen (documented).
    // The outages here close the connections, which fails exchanges at once
    commandTimeoutMs: 10_000,
  })
  const store = options.store ?? createSqliteUsageStore(openSqlite(':memory:'))
  const meter = await createMeter({
    store,
    clock: systemClock,
    flushMs: options.flushMs ?? 50,
    bank,
    onBankDown: options.onBankDown ?? 'open',
  })
  return tracked({ meter, bank, store }, stopInstance)
}

async function stopInstance(instance: Instance): Promise<void> {
  forget(instance)
  await instance.meter.close()
  await instance.bank.close()
}

/** Admits and settles one call; the refusal when there is one. */
async function spend(meter: Meter, payer: MeterSubject, credits = 80): Promise<'served' | unknown> {
  let admission: Admission
  try {
    admission = await meter.admit(payer, credits)
  } catch (err) {
    return err
  }
  await nextTurn()
  meter.settle(admission, call(credits))
  return 'served'
}

/** Redis's clock, in ms: the one leases expire and the bucket refills by (creditScript.ts). */
const redisMs = ([seconds, micros]: (number | string)[]) =>
  Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000)

async function dayState(redis: import('ioredis').Redis, keyPrefix: string, subjectId: string) {
  return redis.hgetall(`${keyPrefix}credits:${subjectId}:${today()}`)
}

describe('meters sharing one balance on Redis', () => {
  const prefix = createTestPrefix()
  afterEach(stopLeftovers)
  after(() => prefix.remove())

  it('three instances spend 80,000 credits in calls of 80: exactly 1,000 served, none overdrawn', async () => {
    const keyPrefix = `${prefix.keyPrefix}exact:`
    const instances = await Promise.all([1, 2, 3].map(() => startInstance(prefix.url, keyPrefix)))
    const payer = subject()
    // 500 calls per instance: an instance can run out of calls holding the credits another needs
    // (they are recalled from it)
    const results = await Promise.all(
      Array.from({ length: 1_500 }, (_, index) => spend((instances[index % 3] as Instance).meter, payer)),
    )
    const served = results.filter((result) => result === 'served').length
    const refusals = results.filter((result) => result !== 'served')
    assert.equal(served, 1_000)
    assert.equal(refusals.length, 500)
    assert.ok(refusals.every((err) => err instanceof DailyLimitError))
    // an instance's view is the balance as its last exchange saw it (one that finished its calls
    // early saw credits the others spent since): its next call asks Redis, is refused, and shows 0
    for (const { meter } of instances) {
      assert.ok((await spend(meter, payer)) instanceof DailyLimitError)
      assert.equal(meter.remainingCredits(payer), 0)
    }
    await Promise.all(instances.map(stopInstance))
    // every instance's ledger together: exactly the calls served
    let calls = 0
    let credits = 0
    for (const { store } of instances) {
      for (const row of await store.queryUsage({ fromDay: today() })) {
        calls += row.calls
        credits += row.credits
      }
    }
    assert.deepEqual({ calls, credits }, { calls: 1_000, credits: 80_000 })
    const state = await dayState(prefix.redis, keyPrefix, 'account:1')
    assert.equal(state.granted, '80000')
  })

  it('malformed notices on the channel are ignored: the instance keeps working and hears the next good one', async () => {
    const keyPrefix = `${prefix.keyPrefix}malformed:`
    const instance = await startInstance(prefix.url, keyPrefix)
    const heard: unknown[] = []
    instance.bank.onNotice((notice) => heard.push(notice))
    const payer = subject()
    // the account is known here: a recall for it is looked at subject by subject
    assert.equal(await spend(instance.meter, payer), 'served')
    const channel = `${keyPrefix}credits:notices`
    for (const text of [
      JSON.stringify({ kind: 'recall', account: 'account:1', day: today() }),
      JSON.stringify({ kind: 'recall', account: 'account:1', subjects: 'account:1', day: today() }),
      JSON.stringify({ kind: 'recall', account: 'account:1', subjects: [1], day: today() }),
      JSON.stringify({ kind: 'returned', account: 1, subjects: [], day: today() }),
      JSON.stringify({ kind: 'other', account: 'account:1', subjects: [], day: today() }),
      'null',
      '[]',
      'not json',
    ]) {
      await prefix.redis.publish(channel, text)
    }
    const good = { kind: 'recall', account: 'account:1', subjects: ['account:1'], day: today() }
    await prefix.redis.publish(channel, JSON.stringify(good))
    await until(() => heard.length > 0, 'the good notice to be heard')
    assert.deepEqual(heard, [good])
    assert.equal(await spend(instance.meter, payer), 'served')
    await stopInstance(instance)
  })

  it("a key's own daily limit is shared too, and refused with its own 429", async () => {
    const keyPrefix = `${prefix.keyPrefix}keyday:`
    const instances = await Promise.all([1, 2, 3].map(() => startInstance(prefix.url, keyPrefix)))
    const payer = subject({ keyDailyCredits: 40_000 })
    const results = await Promise.all(
      Array.from({ length: 1_500 }, (_, index) => spend((instances[index % 3] as Instance).meter, payer)),
    )
    assert.equal(results.filter((result) => result === 'served').length, 500)
    const refusals = results.filter((result) => result !== 'served') as RateLimitError[]
    assert.ok(refusals.every((err) => err instanceof RateLimitError && err.wireFields?.event === -33400))
    await Promise.all(instances.map(stopInstance))
    assert.equal((await dayState(prefix.redis, keyPrefix, 'key:10')).granted, '40000')
    assert.equal((await dayState(prefix.redis, keyPrefix, 'account:1')).granted, '40000')
  })

  it('a closed instance gives its unspent lease back at once', async () => {
    const keyPrefix = `${prefix.keyPrefix}close:`
    const first = await startInstance(prefix.url, keyPrefix)
    const payer = subject()
    assert.equal(await spend(first.meter, payer), 'served')
    const held = await dayState(prefix.redis, keyPrefix, 'account:1')
    assert.ok(Number(held.granted) > 80, 'the first call leased more than itself')
    await stopInstance(first)
    assert.equal((await dayState(prefix.redis, keyPrefix, 'account:1')).granted, '80')
    const second = await startInstance(prefix.url, keyPrefix)
    assert.equal(await spend(second.meter, payer, 80_000 - 80), 'served')
    assert.ok((await spend(second.meter, payer, 1)) instanceof DailyLimitError)
    await stopInstance(second)
  })

  it("a killed instance's lease returns to the pool when it expires, less what it reported spent", async () => {
    const keyPrefix = `${prefix.keyPrefix}expiry:`
    const killed = await startInstance(prefix.url, keyPrefix)
    const payer = subject()
    assert.equal(await spend(killed.meter, payer), 'served')
    await until(async () => {
      const s = await dayState(prefix.redis, keyPrefix, 'account:1')
      return s[`u:${killed.bank.instanceId}`] === '80'
    }, 'the spend to be reported')
    // SIGKILL, as far as Redis can tell: no more reports, no lease given back
    forget(killed)
    await killed.bank.close()
    const other = await startInstance(prefix.url, keyPrefix)
    const expiresMs = Number(
      (await dayState(prefix.redis, keyPrefix, 'account:1'))[`e:${killed.bank.instanceId}`],
    )
    assert.ok(
      expiresMs > redisMs(await prefix.redis.time()),
      'the lease runs until its last exchange + its ttl',
    )
    assert.ok(
      (await spend(other.meter, payer, 80_000 - 80)) instanceof DailyLimitError,
      'the lease is still held',
    )
    // its ttl (15 s) runs out: the test moves its expiry to now on Redis's clock instead of waiting
    await prefix.redis.hset(
      `${keyPrefix}credits:account:1:${today()}`,
      `e:${killed.bank.instanceId}`,
      redisMs(await prefix.redis.time()),
    )
    assert.equal(await spend(other.meter, payer, 80_000 - 80), 'served', 'the lease expired')
    assert.ok((await spend(other.meter, payer, 1)) instanceof DailyLimitError)
    await stopInstance(other)
    assert.equal((await dayState(prefix.redis, keyPrefix, 'account:1')).granted, '80000')
  })

  it('per-second limits are one bucket across instances, not one each', async () => {
    const keyPrefix = `${prefix.keyPrefix}rate:`
    const instances = await Promise.all([1, 2, 3].map(() => startInstance(prefix.url, keyPrefix)))
    const payer = subject({ accountCreditsPerSecond: 800, accountDailyCredits: 1e9 })
    const firstPossibleTake = redisMs(await prefix.redis.time())
    const results = await Promise.all(
      Array.from({ length: 90 }, (_, index) => spend((instances[index % 3] as Instance).meter, payer)),
    )
    const served = results.filter((result) => result === 'served').length
    // a full bucket (10 calls), less what is stranded in the slices of the instances the bucket then
    // refuses (under one call each); three buckets would serve 30
    assert.ok(served >= 8, `served ${served}`)
    // and no more than one bucket can give: its 800 credits and what it refilled by its own clock (an
    // account of the bucket's state, whatever time the burst took), less what it still holds
    const [left, lastTake] = await prefix.redis.hmget(`${keyPrefix}rate:account:1`, 't', 'ts')
    const refilled = ((Number(lastTake) - firstPossibleTake) * 800) / 1_000
    assert.ok(
      served * 80 + Number(left) <= 800 + refilled,
      `served ${served}: ${served * 80} credits, ${left} left in the bucket, ${refilled} refilled`,
    )
    const refusals = results.filter((result) => result !== 'served') as RateLimitError[]
    assert.ok(refusals.every((err) => err instanceof RateLimitError && err.wireFields?.event === -33200))
    await Promise.all(instances.map(stopInstance))
  })
})

describe('meters when Redis goes away', () => {
  const prefix = createTestPrefix()
  afterEach(stopLeftovers)
  after(() => prefix.remove())

  it('open: serves on from the last known balance, then reconciles when Redis is back', async () => {
    const keyPrefix = `${prefix.keyPrefix}open:`
    const proxy = tracked(await startTcpProxy(prefix.url), (each) => each.close())
    const instance = await startInstance(proxy.url, keyPrefix)
    const other = await startInstance(prefix.url, keyPrefix)
    const payer = subject({ accountDailyCredits: 8_000 })
    for (let i = 0; i < 10; i++) assert.equal(await spend(instance.meter, payer), 'served')
    for (let i = 0; i < 10; i++) assert.equal(await spend(other.meter, payer), 'served')
    // the instance learns of the other's lease with its next report
    await until(() => instance.meter.remainingCredits(payer) <= 8_000 - 20 * 80, "the other's lease to show")
    const believed = instance.meter.remainingCredits(payer)
    proxy.cut()
    // cut off, it serves what it believed was left, and no more
    const cutOff = []
    for (let i = 0; i < 100; i++) cutOff.push(await spend(instance.meter, payer))
    const servedCutOff = cutOff.filter((result) => result === 'served').length
    assert.equal(servedCutOff, Math.floor(believed / 80))
    assert.ok(servedCutOff < 90)
    assert.ok(cutOff.filter((result) => result !== 'served').every((err) => err instanceof DailyLimitError))
    proxy.restore()
    // reconciled: Redis counts every credit the cut-off instance charged
    await until(async () => {
      const state = await dayState(prefix.redis, keyPrefix, 'account:1')
      return state[`u:${instance.bank.instanceId}`] === String((10 + servedCutOff) * 80)
    }, 'the cut-off spending to be reported')
    await Promise.all([stopInstance(instance), stopInstance(other)])
    const state = await dayState(prefix.redis, keyPrefix, 'account:1')
    assert.equal(Number(state.granted), (20 + servedCutOff) * 80)
  })

  it('closed: refuses what the lease cannot pay with a 503, serves again when Redis is back', async () => {
    const keyPrefix = `${prefix.keyPrefix}closed:`
    const proxy = tracked(await startTcpProxy(prefix.url), (each) => each.close())
    const instance = await startInstance(proxy.url, keyPrefix, {
      onBankDown: 'closed',
    })
    const payer = subject({ accountDailyCredits: 8_000 })
    assert.equal(await spend(instance.meter, payer), 'served')
    const leased = Number((await dayState(prefix.redis, keyPrefix, 'account:1')).granted)
    proxy.cut()
    const results = []
    for (let i = 0; i < 100; i++) results.push(await spend(instance.meter, payer))
    const served = results.filter((result) => result === 'served').length
    // what is left of the lease, and nothing more
    assert.equal(served, (leased - 80) / 80)
    assert.ok(served < 99)
    assert.ok(results.slice(served).every((err) => err instanceof BalanceUnavailableError))
    proxy.restore()
    await until(async () => (await spend(instance.meter, payer)) === 'served', 'Redis to be back')
    await stopInstance(instance)
  })

  it("Redis down at start: the instance starts, serves from the store's figure (open), and reports once Redis is up", async () => {
    const server = tracked(await startRedisServer(), (each) => each.stop())
    await server.stop()
    const instance = await startInstance(server.url, 'tollgate-test:')
    const payer = subject({ accountDailyCredits: 800 })
    const results = []
    for (let i = 0; i < 12; i++) results.push(await spend(instance.meter, payer))
    assert.equal(results.filter((result) => result === 'served').length, 10)
    assert.ok(results.slice(10).every((err) => err instanceof DailyLimitError))
    await server.start()
    const look = tracked(createTestPrefix(server.url), async (each) => each.redis.disconnect())
    await until(
      async () =>
        (await dayState(look.redis, 'tollgate-test:', 'account:1'))[`u:${instance.bank.instanceId}`] ===
        '800',
      'the spending to be reported',
    )
    assert.equal((await dayState(look.redis, 'tollgate-test:', 'account:1')).granted, '800')
  })

  it('Redis restarted empty: the day is seeded again from the usage store, and the balance holds', async () => {
    const server = tracked(await startRedisServer(), (each) => each.stop())
    const store = createSqliteUsageStore(openSqlite(':memory:'))
    const keyPrefix = 'tollgate-test:'
    const instances = await Promise.all([1, 2].map(() => startInstance(server.url, keyPrefix, { store })))
    const payer = subject({ accountDailyCredits: 8_000 })
    const before = await Promise.all(
      Array.from({ length: 50 }, (_, index) => spend((instances[index % 2] as Instance).meter, payer)),
    )
    assert.equal(before.filter((result) => result === 'served').length, 50)
    await Promise.all(instances.map(({ meter }) => meter.flush()))
    // what each instance holds unspent, once both have reported the 50 calls (`o:` as of that report)
    const look = tracked(createTestPrefix(server.url), async (each) => each.redis.disconnect())
    const fields = async () => Object.entries(await dayState(look.redis, keyPrefix, 'account:1'))
    const sumOf = (entries: [string, string][], kind: string) =>
      entries.filter(([name]) => name.startsWith(kind)).reduce((total, [, value]) => total + Number(value), 0)
    await until(async () => sumOf(await fields(), 'u:') === 50 * 80, 'the 50 calls to be reported')
    const heldCalls = (await fields())
      .filter(([name]) => name.startsWith('o:'))
      .map(([, held]) => Math.floor(Number(held) / 80))
    forget(look)
    look.redis.disconnect()
    await server.stop()
    await server.start()
    // in open mode an instance that has not reconnected yet would count alone: wait for both
    await until(() => instances.every(({ bank }) => bank.isConnected()), 'the instances to reconnect')
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, index) => spend((instances[index % 2] as Instance).meter, payer)),
    )
    // the 50 calls before the restart are in the store and the leases the instances held count
    // again, as far as they fit: 50 more, exactly (each instance's share of the seed is known,
    // whenever its flushes fell against the seed's read of the ledger)
    const served = results.filter((result) => result === 'served').length
    assert.equal(served, 50, `${served} served, leases ${heldCalls}`)
    await Promise.all(instances.map(stopInstance))
    const usage = await store.queryUsage({ fromDay: today() })
    assert.equal(
      usage.reduce((total, row) => total + row.credits, 0),
      (50 + served) * 80,
    )
  })

  // The miscount the seed's per-instance shares put right, made to happen. Reports only with
  // exchanges (no flush timer) and the calls one at a time, so that the order is the test's
  it('Redis restarted empty: what an instance spends of its lease and writes to the ledger after another read it for the seed is counted', async () => {
    const server = tracked(await startRedisServer(), (each) => each.stop())
    const store = createSqliteUsageStore(openSqlite(':memory:'))
    const keyPrefix = 'tollgate-test:'
    /** Runs after the seeding instance has read the ledger, before it seeds. */
    let afterSeedRead: (() => Promise<void>) | undefined
    const seeding: UsageStore = {
      ...store,
      async loadDaySeeds(day, subjects) {
        const read = await store.loadDaySeeds(day, subjects)
        await afterSeedRead?.()
        return read
      },
    }
    const a = await startInstance(server.url, keyPrefix, { store: seeding, flushMs: 600_000 })
    const b = await startInstance(server.url, keyPrefix, { store, flushMs: 600_000 })
    const payer = subject({ accountDailyCredits: 8_000 })
    // each takes a lease (the first an instance asks for is several calls' worth) and spends 2 calls of it
    for (const { meter } of [a, b, a, b]) assert.equal(await spend(meter, payer), 'served')
    await Promise.all([a, b].map(({ meter }) => meter.flush()))
    await server.stop()
    await server.start()
    await until(() => [a, b].every(({ bank }) => bank.isConnected()), 'the instances to reconnect')
    // B spends 3 calls of its lease, written to the ledger only once A has read it for its seed
    for (let i = 0; i < 3; i++) assert.equal(await spend(b.meter, payer), 'served')
    afterSeedRead = async () => {
      afterSeedRead = undefined
      await b.meter.flush()
    }
    let served = 3
    while ((await spend(a.meter, payer)) === 'served') served++
    assert.equal(afterSeedRead, undefined, 'A seeded the day')
    while ((await spend(b.meter, payer)) === 'served') served++
    while ((await spend(a.meter, payer)) === 'served') served++
    // B's lease was spent past what A, not knowing of it, was granted (documented); but every call
    // served is in the day's figure once both have reported (closing, they give their leases back)
    await Promise.all([a, b].map(stopInstance))
    const look = tracked(createTestPrefix(server.url), async (each) => each.redis.disconnect())
    const { granted } = await dayState(look.redis, keyPrefix, 'account:1')
    assert.equal(Number(granted), (4 + served) * 80)
  })
})
