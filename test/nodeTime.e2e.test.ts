import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type Anvil, startAnvil } from '../src/devnet/startAnvil.ts'
import { getMethodSpec } from '../src/methods/methodTable.ts'
import { endlessCode } from './helpers/measureEndlessGas.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type CountingProxy, startCountingProxy } from './helpers/startCountingProxy.ts'
import { startTestGateway, type TestGateway, unlimitedKey } from './helpers/startTestGateway.ts'
import { until } from './helpers/until.ts'

// Time at the node is work (docs/plans.md): a call the node works on until its deadline reaches it
// once and is paid for; one key's slow calls never take the node from the others; each key has a
// bound on its calls in flight at the nodes.

/** What every request running it holds: how the proxy tells them apart. */
const endlessMarker = endlessCode.slice(2)
/** 100M: about 0.8 s of anvil's CPU on a fast machine (measureEndlessGas), twice the deadline below. */
const endlessGas = '0x5f5e100'
/** Enough gas for a fraction of a second of it: a call slow, but answered within its deadline. */
const slowGas = '0x1312d00'

let nextTarget = 0x1000
/** An eth_call running the endless code (at a new address each time: no two are one call to the cache). */
function endlessCall(id: number, gas = endlessGas) {
  const to = `0x${(nextTarget++).toString(16).padStart(40, '0')}`
  return rpcBody('eth_call', [{ to, gas }, 'latest', { [to]: { code: endlessCode } }], id)
}

let nextAddress = 0xbeef0000
/** A cheap call the cache cannot answer (a new address each time): it goes to the node. */
function cheapCall(id = 1) {
  return rpcBody('eth_getBalance', [`0x${(nextAddress++).toString(16).padStart(40, '0')}`, 'latest'], id)
}

const callPrice = getMethodSpec('eth_call').costCredits

describe('time at the node', () => {
  let anvil: Anvil
  let proxy: CountingProxy
  before(async () => {
    anvil = await startAnvil()
    proxy = await startCountingProxy(anvil.url)
  })
  after(async () => {
    await proxy?.close()
    await anvil?.stop()
  })

  describe("a key's calls in flight at the nodes", () => {
    let gateway: TestGateway
    let developer: string
    let other: string
    before(async () => {
      gateway = await startTestGateway({
        upstreams: [proxy.url],
        config: { plans: { developer: { maxCallsInFlight: 2 } }, upstreams: { timeoutMs: 10_000 } },
      })
      const created = await gateway.app.keyAdmin.create({ plan: 'developer', name: 'bounded' })
      const otherKey = await gateway.app.keyAdmin.create({ ...unlimitedKey, name: 'other' })
      await gateway.app.keys.refresh()
      developer = `${gateway.url}/v3/${created.key.key}`
      other = `${gateway.url}/v3/${otherKey.key.key}`
    })
    after(async () => {
      await gateway?.close()
    })

    it("past its plan's maxCallsInFlight wait their turn: the node never has more of them, and another key is not held", async () => {
      const slow = proxy.watch(endlessMarker)
      const batch = postJson(
        developer,
        [1, 2, 3, 4, 5].map((id) => endlessCall(id, slowGas)),
      )
      let batchDone = false
      void batch.then(() => {
        batchDone = true
      })
      await until(() => slow.sent === 2, 'two of the batch at the node')
      const otherAnswer = await postJson(other, cheapCall())
      assert.equal(otherAnswer.status, 200, otherAnswer.text)
      assert.equal(batchDone, false, "the other key's call did not wait for the bounded key's")
      const answers = (await batch).json as { id: number; result?: unknown; error?: { message: string } }[]
      // every call waited for a slot and was answered by the node (its gas ran out): none refused
      assert.deepEqual(
        answers.map((answer) => [answer.id, answer.error?.message]),
        [1, 2, 3, 4, 5].map((id) => [id, 'EVM error OutOfGas']),
      )
      assert.deepEqual([slow.sent, slow.maxInFlight], [5, 2])
    })
  })

  describe('a call slower than its deadline', () => {
    let gateway: TestGateway
    let other: string
    before(async () => {
      gateway = await startTestGateway({
        upstreams: [proxy.url],
        config: {
          // no health check within a test: what the node did meanwhile is the calls' own
          upstreams: { timeoutMs: 400, headPollMs: 60_000, breaker: { failures: 1 } },
        },
      })
      const otherKey = await gateway.app.keyAdmin.create({ ...unlimitedKey, name: 'other' })
      await gateway.app.keys.refresh()
      other = `${gateway.url}/v3/${otherKey.key.key}`
    })
    after(async () => {
      await gateway?.close()
    })

    const upstream = () => gateway.app.networks.all[0]?.pool.members[0]

    it('that the node works on while it answers others reaches it once, costs its price, and another key is served throughout', async () => {
      const slow = proxy.watch(endlessMarker)
      const answer = postJson(gateway.endpoint, endlessCall(1))
      let done = false
      void answer.then(() => {
        done = true
      })
      await until(() => slow.sent === 1, 'the call at the node')
      const statuses: number[] = []
      while (!done) statuses.push((await postJson(other, cheapCall())).status)
      const slowAnswer = await answer
      assert.equal(slowAnswer.status, 504)
      assert.deepEqual(slowAnswer.json, {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32603,
          message: 'upstream request timed out: the node was still working on the call',
        },
      })
      assert.equal(slowAnswer.headers.get('x-credits-charged'), String(callPrice))
      assert.ok(statuses.length > 0, 'another key called meanwhile')
      assert.deepEqual(new Set(statuses), new Set([200]))
      assert.equal(slow.sent, 1, 'never sent again to the node still at work on it')
      // and after: the node is in use, its health untouched
      assert.equal((await postJson(other, cheapCall())).status, 200)
      assert.deepEqual([upstream()?.breaker.state, upstream()?.failures], ['closed', 0])
    })

    it('four in one batch, with nothing else at the node, do not take it out of use: another key is served right after', async () => {
      const slow = proxy.watch(endlessMarker)
      const requestsBefore = upstream()?.requests ?? 0
      const batch = await postJson(
        gateway.endpoint,
        [1, 2, 3, 4].map((id) => endlessCall(id)),
      )
      const right = await postJson(other, cheapCall())
      assert.equal(right.status, 200, right.text)
      const answers = batch.json as { id: number; error?: { code: number; message: string } }[]
      const worked = answers.filter((each) => each.error?.message.endsWith('still working on the call'))
      for (const each of answers) {
        assert.equal(each.error?.code, -32603)
        assert.match(each.error?.message ?? '', /^upstream request timed out/)
      }
      // the first to time out had nothing else answered before it: the node may have been at fault,
      // and it is free; those after its liveness check answered are the calls' own
      assert.ok(worked.length < 4, `${worked.length} of 4 charged`)
      const charged = worked.length * callPrice + (worked.length > 0 ? 80 : 0)
      assert.equal(batch.headers.get('x-credits-charged'), String(charged))
      assert.equal(slow.sent, 4, 'each once')
      // each of the five counted once its liveness check has said (forgiven, or failures)
      await until(() => upstream()?.requests === requestsBefore + 5, 'its liveness check')
      assert.deepEqual([upstream()?.breaker.state, upstream()?.failures], ['closed', 0])
    })
  })
})
