import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { pino } from 'pino'
import { until } from '../../test/helpers/until.ts'
import type { HeadEvent, Header } from '../networks/createHeadChain.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { UpstreamPool } from '../upstreams/createUpstreamPool.ts'
import { createFeeIndexer } from './createFeeIndexer.ts'
import type { FeeBlock, FeeHistoryStore } from './feeHistoryStore.ts'

const chainId = 1
const hash = (number: number) => `0x${number.toString(16).padStart(64, '0')}`
const header = (number: number): Header => ({
  number: `0x${number.toString(16)}`,
  hash: hash(number),
  parentHash: hash(number - 1),
  baseFeePerGas: `0x${(1_000 + number).toString(16)}`,
})

/** A fee history store in memory. */
function memoryStore(): FeeHistoryStore {
  const blocks = new Map<number, FeeBlock>()
  const hashes = new Map<number, string>()
  let next: { head: number; baseFee: bigint } | undefined
  return {
    latest: async (_chain, head, count) =>
      [...blocks.values()]
        .filter((block) => block.number <= head)
        .sort((a, b) => a.number - b.number)
        .slice(-count),
    storedNumbers: async (_chain, from, to) =>
      [...blocks.keys()].filter((number) => number >= from && number <= to).sort((a, b) => a - b),
    upsert: async (_chain, list) => {
      for (const block of list) blocks.set(block.number, block)
    },
    deleteFrom: async (_chain, from) => {
      for (const number of [...blocks.keys()]) if (number >= from) blocks.delete(number)
    },
    deleteBelow: async (_chain, below) => {
      for (const number of [...blocks.keys()]) if (number < below) blocks.delete(number)
    },
    getHeadHashes: async () => new Map(hashes),
    setHeadHash: async (_chain, number, blockHash) => {
      hashes.set(number, blockHash)
    },
    getNextBaseFee: async () => next,
    setNextBaseFee: async (_chain, head, baseFee) => {
      next = { head, baseFee }
    },
  }
}

/** A network whose node answers eth_feeHistory and blocks by number, and whose head tracker the test drives. */
function fakeNetwork() {
  const calls: string[] = []
  const listeners = new Set<(event: HeadEvent) => void>()
  let newest = header(10)
  const pool = {
    async send(body: string) {
      const { method, params } = JSON.parse(body) as { method: string; params: unknown[] }
      calls.push(`${method} ${String(params[0])}`)
      let result: unknown
      if (method === 'eth_feeHistory') {
        const count = Number(params[0])
        const last = Number(params[1])
        const oldest = last - count + 1
        const numbers = Array.from({ length: count }, (_, index) => oldest + index)
        result = {
          oldestBlock: `0x${oldest.toString(16)}`,
          baseFeePerGas: [...numbers, last + 1].map((number) => `0x${(1_000 + number).toString(16)}`),
          gasUsedRatio: numbers.map(() => 0.5),
          reward: numbers.map(() => ['0x1', '0x2', '0x3', '0x4', '0x5']),
        }
      } else if (method === 'eth_getBlockByNumber') {
        result = header(Number(params[0]))
      } else {
        result = null
      }
      return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result }))
    },
  } as unknown as UpstreamPool
  const heads = {
    header: () => newest,
    subscribe(listener: (event: HeadEvent) => void) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    poll: async () => undefined,
  }
  const network = { chainId, pool, heads } as unknown as Network
  /** The tracker announces a new head. */
  const announce = (number: number) => {
    newest = header(number)
    for (const listener of listeners) listener({ kind: 'head', header: newest })
  }
  return { network, calls, announce, listeners }
}

const log = pino({ level: 'silent' })

describe('createFeeIndexer', () => {
  it("follows the head tracker's heads: a pass per new head, and never asks a node for its head", async () => {
    const { network, calls, announce } = fakeNetwork()
    const indexer = createFeeIndexer({
      network,
      store: memoryStore(),
      windowBlocks: 20,
      chunkBlocks: 1024,
      pollMs: 60_000,
      log,
    })
    indexer.start()
    await until(() => indexer.window()?.head === 10, 'the first pass')
    assert.equal(indexer.window()?.blocks.length, 11)
    announce(11)
    announce(12)
    announce(13)
    await until(() => indexer.window()?.head === 13, 'the new heads')
    assert.deepEqual(
      indexer.window()?.blocks.map((block) => block.number),
      Array.from({ length: 14 }, (_, index) => index),
    )
    assert.equal(indexer.window()?.nextBaseFee, 1_014n)
    assert.deepEqual(
      calls.filter((call) => call === 'eth_getBlockByNumber latest' || call.startsWith('eth_blockNumber')),
      [],
    )
    await indexer.stop()
  })

  it('stop() leaves the tracker: later heads start no pass', async () => {
    const { network, calls, announce, listeners } = fakeNetwork()
    const indexer = createFeeIndexer({
      network,
      store: memoryStore(),
      windowBlocks: 20,
      chunkBlocks: 1024,
      pollMs: 60_000,
      log,
    })
    indexer.start()
    assert.equal(listeners.size, 1)
    await until(() => indexer.window()?.head === 10, 'the first pass')
    await indexer.stop()
    assert.equal(listeners.size, 0)
    const before = calls.length
    announce(11)
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(calls.length, before)
    assert.equal(indexer.window()?.head, 10)
  })
})
