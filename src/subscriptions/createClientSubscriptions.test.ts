import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { HeadEvent } from '../networks/createHeadChain.ts'
import { createClientSubscriptions } from './createClientSubscriptions.ts'
import type { LogsEvent, SubscriptionHub } from './createSubscriptionHub.ts'

/** A hub whose events the test emits by hand. */
function fakeHub() {
  const heads = new Set<(event: HeadEvent) => void>()
  const logs = new Set<(event: LogsEvent) => void>()
  const hub: SubscriptionHub = {
    counts: () => ({ newHeads: heads.size, logs: logs.size, newPendingTransactions: 0 }),
    onHead(listener) {
      heads.add(listener)
      return () => heads.delete(listener)
    },
    onLogs(listener) {
      logs.add(listener)
      return () => logs.delete(listener)
    },
    onPendingTransaction: () => {
      throw new Error('no upstream WebSocket')
    },
    close() {},
  }
  return { hub, heads, logs }
}

const header = { number: '0x5', hash: `0x${'05'.repeat(32)}`, parentHash: `0x${'04'.repeat(32)}` }
const address = `0x${'aa'.repeat(20)}`
const topic = `0x${'01'.repeat(32)}`

function setup(balance: number) {
  const { hub, heads, logs } = fakeHub()
  const sent: { subscription: string; result: unknown }[] = []
  const charged: { method: string; credits: number }[] = []
  let left = balance
  const subscriptions = createClientSubscriptions({
    hub,
    maxSubscriptions: 2,
    send: (payload) => sent.push((JSON.parse(payload) as { params: (typeof sent)[number] }).params),
    charge(usage) {
      if (usage.credits > left) return false
      left -= usage.credits
      charged.push(usage)
      return true
    },
  })
  return { subscriptions, heads, logs, sent, charged }
}

describe('createClientSubscriptions', () => {
  it('charges newHeads per block and logs per block with a match, from the one price table', () => {
    const { subscriptions, heads, logs, sent, charged } = setup(1_000)
    const headsId = subscriptions.subscribe(['newHeads'])
    const logsId = subscriptions.subscribe(['logs', { address, topics: [topic] }])
    for (const emit of heads) emit({ kind: 'head', header })
    const matching = { address, topics: [topic], logIndex: '0x0' }
    const other = { address: `0x${'bb'.repeat(20)}`, topics: [topic], logIndex: '0x1' }
    for (const emit of logs)
      emit({ kind: 'logs', header, logs: [matching, other, { ...matching, logIndex: '0x2' }] })
    for (const emit of logs) emit({ kind: 'logs', header, logs: [other] })
    assert.deepEqual(charged, [
      { method: 'eth_subscription:newHeads', credits: 50 },
      { method: 'eth_subscription:logs', credits: 300 },
    ])
    assert.deepEqual(
      sent.map((each) => each.subscription),
      [headsId, logsId, logsId],
    )
    // logs a reorg dropped come again with removed: true, free
    for (const emit of logs) emit({ kind: 'removed', header, logs: [{ ...matching, removed: true }] })
    assert.equal(charged.length, 2)
    assert.equal(sent.length, 4)
  })

  it('sends nothing that the balance cannot pay for', () => {
    const { subscriptions, heads, sent } = setup(60)
    subscriptions.subscribe(['newHeads'])
    for (const emit of heads) emit({ kind: 'head', header })
    for (const emit of heads) emit({ kind: 'head', header: { ...header, number: '0x6' } })
    assert.equal(sent.length, 1)
  })

  it('refuses unknown kinds, pending transactions without an upstream WebSocket, and too many; lists the params of the live ones', () => {
    const { subscriptions, heads } = setup(1_000)
    assert.throws(() => subscriptions.subscribe(['newBlocks']), { code: -32602 })
    // a logs filter past geth's limits makes no subscription
    const addresses = Array.from({ length: 1001 }, (_, at) => `0x${at.toString(16).padStart(40, '0')}`)
    assert.throws(() => subscriptions.subscribe(['logs', { address: addresses }]), {
      code: -32602,
      message: 'invalid argument 1: too many addresses, the limit is 1000',
    })
    assert.equal(subscriptions.size, 0)
    assert.throws(() => subscriptions.subscribe(['newPendingTransactions']), /needs an upstream WebSocket/)
    const first = subscriptions.subscribe(['newHeads'])
    subscriptions.subscribe(['newHeads'])
    assert.throws(() => subscriptions.subscribe(['newHeads']), { code: -32005 })
    assert.equal(subscriptions.unsubscribe(first), true)
    assert.equal(subscriptions.unsubscribe(first), false)
    assert.deepEqual([...subscriptions.params()], [['newHeads']])
    assert.equal(heads.size, 1)
    subscriptions.stopAll()
    assert.equal(heads.size, 0)
    assert.equal(subscriptions.size, 0)
    assert.deepEqual([...subscriptions.params()], [])
  })
})
