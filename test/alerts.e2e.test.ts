import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { AlertPayload } from '../src/alerts/alertPayload.ts'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import {
  type AlertReceiver,
  startAlertReceiver,
  verifyTollgateSignature,
} from './helpers/startAlertReceiver.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { createTestPrefix, type TestPrefix } from './helpers/testRedis.ts'
import { until } from './helpers/until.ts'

const adminToken = 'alerts-e2e-admin-token'

/** Short waits between attempts, for tests: the schedule's shape is the unit tests' business. */
const alertsConfig = { retryBaseMs: 50, retryMaxMs: 200, pollMs: 50, privateAddresses: true }

type Setup = {
  name: string
  /** Gateways sharing one database (and, for Postgres, one Redis). */
  start(node: TestNode): Promise<{ gateways: TestGateway[]; cleanup: () => Promise<void> }>
}

const setups: Setup[] = [
  {
    name: 'one gateway on SQLite',
    async start(node) {
      const dir = mkdtempSync(join(tmpdir(), 'tollgate-alerts-'))
      const gateway = await startTestGateway({
        upstreams: [node.url],
        config: {
          admin: { token: adminToken },
          storage: { sqlite: join(dir, 'tollgate.db') },
          metering: { flushMs: 100 },
          alerts: alertsConfig,
        },
      })
      return { gateways: [gateway], cleanup: async () => rmSync(dir, { recursive: true, force: true }) }
    },
  },
  {
    name: 'two gateways sharing Postgres and Redis',
    async start(node) {
      const schema: TestSchema = await createTestSchema()
      const prefix: TestPrefix = createTestPrefix()
      const gateways: TestGateway[] = []
      // one after the other: the first migrates, both then share the schema
      for (let i = 0; i < 2; i++) {
        gateways.push(
          await startTestGateway({
            upstreams: [node.url],
            config: {
              admin: { token: adminToken },
              storage: { postgres: schema.url },
              redis: { url: prefix.url, keyPrefix: prefix.keyPrefix },
              metering: { flushMs: 100, redisTimeoutMs: 10_000 },
              alerts: alertsConfig,
            },
          }),
        )
      }
      return {
        gateways,
        cleanup: async () => {
          await schema.drop()
          await prefix.remove()
        },
      }
    },
  },
]

for (const setup of setups) {
  describe(`usage alerts: ${setup.name}`, () => {
    let node: TestNode
    let receiver: AlertReceiver
    let gateways: TestGateway[]
    let cleanup: () => Promise<void>
    const keys: Record<string, string> = {}
    const secrets: Record<string, string> = {}
    /** The first event's first attempts fail: a 500, then a connection dropped unanswered. */
    let firstEvent: string | undefined

    const at = (index: number) => gateways[index % gateways.length] as TestGateway
    const request = async (
      index: number,
      method: string,
      path: string,
      body?: unknown,
      token = adminToken,
    ) => {
      const response = await fetch(`${at(index).url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      const json = (await response.json()) as Record<string, unknown>
      assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${JSON.stringify(json)}`)
      return json
    }
    /** `times` calls of 5 credits each (eth_chainId), spread over the gateways in turn. */
    const spend = async (key: string, times: number) => {
      for (let i = 0; i < times; i++) {
        const answer = await postJson(`${at(i).url}/v3/${keys[key]}`, rpcBody('eth_chainId'))
        assert.equal(answer.status, 200, answer.text)
      }
    }
    /** The events the receiver took (2xx), by path, each once with its payload. */
    const delivered = (path: string) =>
      receiver.received
        .filter((got) => got.path === path && got.answer === 200)
        .map((got) => ({ ...got, payload: JSON.parse(got.body) as AlertPayload & { text?: string } }))

    before(async () => {
      node = await startTestNode({ loadBlocks: 1 })
      receiver = await startAlertReceiver((eventId, attempt) => {
        firstEvent ??= eventId
        if (eventId !== firstEvent) return 200
        return attempt === 1 ? 500 : attempt === 2 ? 'drop' : 200
      })
      ;({ gateways, cleanup } = await setup.start(node))
      for (const [name, account, creditsPerSecond] of [
        ['acme', 'acme', 100_000],
        ['globex', 'globex', 100_000],
        ['initech', 'initech', 5],
      ] as const) {
        const made = await request(0, 'POST', '/admin/keys', {
          account,
          plan: 'custom',
          name,
          dailyCredits: 100,
          creditsPerSecond,
        })
        keys[name] = made.key as string
      }
      await Promise.all(gateways.map((gateway) => gateway.app.keys.refresh()))
    })
    after(async () => {
      for (const gateway of gateways ?? []) await gateway.close()
      await cleanup?.()
      await receiver?.close()
      await node?.stop()
    })

    it('set through the admin API: the signing secret is answered once', async () => {
      const set = await request(1, 'PUT', '/admin/accounts/acme/alerts', {
        webhook: `${receiver.url}/acme`,
        thresholds: [50, 75, 90],
      })
      assert.match(set.secret as string, /^tgw_[0-9a-f]{64}$/)
      secrets.acme = set.secret as string
      const shown = await request(0, 'GET', '/admin/accounts/acme/alerts')
      assert.deepEqual(
        { ...shown, updatedAt: undefined },
        {
          account: 'acme',
          enabled: true,
          webhook: `${receiver.url}/acme`,
          thresholds: [50, 75, 90],
          format: 'json',
          updatedAt: undefined,
        },
      )
      // a change keeps the secret: none is answered
      const again = await request(0, 'PUT', '/admin/accounts/acme/alerts', { thresholds: [50, 75, 90] })
      assert.equal(again.secret, null)
    })

    it('past 50% and 75% through every instance: one event per threshold, retried with the same id and a valid signature', async () => {
      await spend('acme', 10)
      await until(() => delivered('/acme').length === 1, 'the 50% event delivered')
      await spend('acme', 6)
      await until(() => delivered('/acme').length === 2, 'the 75% event delivered')
      const events = delivered('/acme').map((got) => got.payload)
      assert.deepEqual(
        events.map(({ account, key, event, threshold, creditLimit }) => ({
          account,
          key,
          event,
          threshold,
          creditLimit,
        })),
        [50, 75].map((threshold) => ({
          account: 'acme',
          key: null,
          event: 'credits',
          threshold,
          creditLimit: 100,
        })),
      )
      assert.ok((events[0]?.creditsUsed as number) >= 50 && (events[1]?.creditsUsed as number) >= 75)
      // the first event's attempts: a 500, a dropped connection, then taken; one id, each signed
      const first = receiver.received.filter((got) => got.eventId === firstEvent)
      assert.deepEqual(
        first.map((got) => got.answer),
        [500, 'drop', 200],
      )
      for (const got of receiver.received) {
        assert.equal(got.contentType, 'application/json')
        assert.ok(verifyTollgateSignature(secrets.acme as string, got.signature, got.body), got.signature)
        assert.equal((JSON.parse(got.body) as AlertPayload).id, got.eventId)
      }
      // the delivery log, as the operator reads it: a sender records an answer once it has it, so the
      // receiver may have the event a moment before the log says delivered
      type Delivery = {
        threshold: number
        status: string
        attempts: number
        lastStatus: string
        nextAttemptAt: string | null
      }
      let log: Delivery[] = []
      await until(async () => {
        log = (await request(1, 'GET', '/admin/accounts/acme/alerts/deliveries')).deliveries as Delivery[]
        return log.length === 2 && log.every((delivery) => delivery.status !== 'pending')
      }, 'both deliveries recorded')
      assert.deepEqual(
        log
          .map(({ threshold, status, attempts, lastStatus, nextAttemptAt }) => ({
            threshold,
            status,
            attempts,
            lastStatus,
            nextAttemptAt,
          }))
          .sort((a, b) => a.threshold - b.threshold),
        [
          { threshold: 50, status: 'delivered', attempts: 3, lastStatus: '200', nextAttemptAt: null },
          { threshold: 75, status: 'delivered', attempts: 1, lastStatus: '200', nextAttemptAt: null },
        ],
      )
    })

    it('a restart sends none again: the next threshold is the next event', async () => {
      await at(0).restart()
      await at(0).app.keys.refresh()
      // 80 credits so far: the restarted instance writes more, looks, and finds 50 and 75 made
      await spend('acme', 3)
      await until(() => delivered('/acme').length === 3, 'the 90% event delivered')
      assert.deepEqual(
        delivered('/acme').map((got) => got.payload.threshold),
        [50, 75, 90],
      )
      assert.equal(
        new Set(receiver.received.filter((got) => got.path === '/acme').map((got) => got.eventId)).size,
        3,
      )
    })

    it('set by the key holder through the account API, in slack format: a signed `text` body', async () => {
      const token = (await request(0, 'POST', '/admin/accounts/globex/token')).token as string
      const set = await request(
        1,
        'PUT',
        '/account/api/alerts',
        { webhook: `${receiver.url}/globex`, format: 'slack' },
        token,
      )
      secrets.globex = set.secret as string
      assert.deepEqual(set.thresholds, [50, 75, 90, 100])
      await spend('globex', 10)
      await until(() => delivered('/globex').length === 1, 'the slack event delivered')
      const [got] = delivered('/globex')
      assert.deepEqual(Object.keys(got?.payload ?? {}), ['text'])
      assert.match(got?.payload.text ?? '', /^Account globex has used 50% of its daily credits/)
      assert.ok(verifyTollgateSignature(secrets.globex, got?.signature ?? '', got?.body ?? ''))
      // recorded by the sender once it has the answer, a moment after the receiver has the event
      let log: { event: string; status: string }[] = []
      await until(async () => {
        const read = await request(0, 'GET', '/account/api/alerts/deliveries', undefined, token)
        log = read.deliveries as typeof log
        return log.length === 1 && log[0]?.status !== 'pending'
      }, 'the delivery recorded')
      assert.deepEqual(
        log.map(({ event, status }) => ({ event, status })),
        [{ event: 'credits', status: 'delivered' }],
      )
      // one account's token reads its own alerts only
      const other = await fetch(`${at(0).url}/account/api/alerts`, {
        headers: { authorization: `Bearer ${token}` },
      })
      assert.equal(((await other.json()) as { account: string }).account, 'globex')
    })

    it("a key's first refusal for its per-second rate of the day is one event", async () => {
      await request(0, 'PUT', '/admin/accounts/initech/alerts', { webhook: `${receiver.url}/initech` })
      let refused = 0
      for (let i = 0; i < 200 && refused < 3; i++) {
        const answer = await postJson(`${at(i).url}/v3/${keys.initech}`, rpcBody('eth_chainId'))
        if (answer.status === 429) refused++
      }
      assert.equal(refused, 3)
      await until(() => delivered('/initech').length === 1, 'the rate event delivered')
      const [got] = delivered('/initech')
      assert.equal(got?.payload.event, 'rate_limited')
      assert.equal(got?.payload.key, 'initech')
      assert.equal(got?.payload.threshold, null)
    })

    it('turned off: GET says so, and DELETE answers whether they were on', async () => {
      assert.deepEqual(await request(0, 'DELETE', '/admin/accounts/initech/alerts'), {
        account: 'initech',
        enabled: false,
        turnedOff: true,
      })
      assert.deepEqual(await request(1, 'GET', '/admin/accounts/initech/alerts'), {
        account: 'initech',
        enabled: false,
      })
    })
  })
}
