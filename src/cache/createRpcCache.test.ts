import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AnswerParts } from '../jsonrpc/AnswerParts.ts'
import { PartnerAnswer, type SentAnswer } from '../jsonrpc/PartnerAnswer.ts'
import type { RpcPayload } from '../jsonrpc/types.ts'
import { cacheKey, createRpcCache, type LoadedAnswer } from './createRpcCache.ts'
import { resultAnswer, splitAnswer } from './keptResults.ts'

/** An upstream answer as nodes write it: the usual member order, id 1. */
const answerOf = (resultText: string) => Buffer.from(`{"jsonrpc":"2.0","id":1,"result":${resultText}}`)

const big = { cache: { maxBytes: 1 << 20, maxEntryBytes: 1 << 20 } }

/** A loader of what `fetch` brings back, answered by a node (not a partner). */
const fromNode =
  (fetch: () => Promise<Buffer>): (() => Promise<SentAnswer>) =>
  async () =>
    await fetch()

/** A loader that resolves or rejects when told, counting its calls. */
function deferredLoader() {
  let resolve: (answer: Buffer) => void = () => {}
  let reject: (err: Error) => void = () => {}
  let calls = 0
  const load = fromNode(() => {
    calls++
    return new Promise<Buffer>((res, rej) => {
      resolve = res
      reject = rej
    })
  })
  return {
    load,
    resolve: (answer: Buffer) => resolve(answer),
    reject: (err: Error) => reject(err),
    get calls() {
      return calls
    },
  }
}

function parse(payload: RpcPayload | undefined): unknown {
  assert.ok(payload !== undefined)
  return JSON.parse(payload.toString())
}

/** The kept result text of a load, as a string whatever its form. */
function resultText(loaded: LoadedAnswer): string {
  assert.ok('result' in loaded, 'expected a result')
  return loaded.result.toString()
}

describe('createRpcCache', () => {
  it('counts misses and hits, and answers a hit with the caller id around the upstream bytes', async () => {
    const cache = createRpcCache(big.cache)
    const result = '{"number":"0x10","hash":"0xab","transactions":[],"extra":"é\\u0041"}'
    assert.equal(cache.get('k', 'immutable', 1), undefined)
    assert.deepEqual([cache.stats.misses, cache.stats.hits], [1, 0])

    const loaded = await cache.load(
      'k',
      'immutable',
      fromNode(async () => answerOf(result)),
    )
    assert.equal(resultText(loaded), result)

    for (const id of [7, 'req-"x"', null, 0, '']) {
      const hit = cache.get('k', 'immutable', id)
      assert.ok(hit !== undefined)
      assert.equal(hit.toString(), `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`)
      assert.deepEqual(parse(hit), { jsonrpc: '2.0', id, result: JSON.parse(result) })
    }
    assert.deepEqual([cache.stats.misses, cache.stats.hits], [1, 5])
    assert.equal(cache.stats.entries, 1)
    assert.ok(cache.stats.bytes > result.length)
  })

  it('keeps a head scope apart from the immutable one', async () => {
    const cache = createRpcCache(big.cache)
    await cache.load(
      'k',
      'head',
      fromNode(async () => answerOf('"0x1"')),
    )
    assert.equal(cache.get('k', 'immutable', 1), undefined)
    assert.deepEqual(parse(cache.get('k', 'head', 1)), { jsonrpc: '2.0', id: 1, result: '0x1' })
  })

  describe('splitAnswer', () => {
    it('fast path: the result text exactly as the node wrote it, trailing blanks ignored', () => {
      const result = '{"b":1,"a":[1.50,2e3,"\\u00e9"],"n":12345678901234567890}'
      for (const tail of ['', '\n', '\r\n', ' \t\n']) {
        assert.deepEqual(splitAnswer(Buffer.from(`{"jsonrpc":"2.0","id":1,"result":${result}}${tail}`)), {
          result,
        })
      }
    })

    it('slow path: other member orders and ids give the same value', () => {
      for (const text of [
        '{"id":1,"jsonrpc":"2.0","result":{"a":"0x1","b":[true,null]}}',
        '{"result":{"a":"0x1","b":[true,null]},"jsonrpc":"2.0","id":1}\n',
        ' {"jsonrpc":"2.0","id":"x","result":{"a":"0x1","b":[true,null]}}',
      ]) {
        const loaded = splitAnswer(Buffer.from(text))
        assert.deepEqual(JSON.parse(resultText(loaded)), { a: '0x1', b: [true, null] })
      }
    })

    it('error answers come back whole', () => {
      for (const text of [
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}',
        '{"id":1,"jsonrpc":"2.0","error":{"code":3,"message":"execution reverted","data":"0x08c379a0"}}',
        '{"jsonrpc":"2.0","id":1}',
      ]) {
        const answer = Buffer.from(text)
        const loaded = splitAnswer(answer)
        assert.ok('answer' in loaded, text)
        assert.equal(loaded.answer, answer)
      }
    })

    it('results over 4096 bytes are Buffers, smaller ones strings, on both paths', () => {
      const small = JSON.stringify('a'.repeat(4094)) // 4096 bytes with the quotes
      const large = JSON.stringify('a'.repeat(4095))
      assert.equal(typeof resultOf(splitAnswer(answerOf(small))), 'string')
      assert.ok(Buffer.isBuffer(resultOf(splitAnswer(answerOf(large)))))
      const slow = (text: string) => Buffer.from(`{"id":1,"jsonrpc":"2.0","result":${text}}`)
      assert.equal(typeof resultOf(splitAnswer(slow(small))), 'string')
      assert.ok(Buffer.isBuffer(resultOf(splitAnswer(slow(large)))))
    })

    it('a large result is kept as a view of an answer that owns its memory, copied out of a larger one', () => {
      // an answer collected from several chunks owns its memory: the result is kept without a copy
      const owned = answerOf(JSON.stringify('b'.repeat(5000)))
      assert.ok(owned.buffer.byteLength - owned.length < 100)
      const view = resultOf(splitAnswer(owned))
      assert.ok(Buffer.isBuffer(view))
      assert.equal(view.buffer, owned.buffer)
      // one that is a slice of a larger buffer (one chunk of a 64 KiB socket read) would keep it all alive
      const read = Buffer.alloc(64 * 1024)
      const text = `{"jsonrpc":"2.0","id":1,"result":${JSON.stringify('c'.repeat(5000))}}`
      const slice = read.subarray(100, 100 + read.write(text, 100))
      const copy = resultOf(splitAnswer(slice))
      assert.ok(Buffer.isBuffer(copy))
      assert.notEqual(copy.buffer, read.buffer)
      read.fill(0x20)
      assert.equal(JSON.parse(copy.toString()), 'c'.repeat(5000))
    })
  })

  it('large results are served as Buffers, small ones as strings, both whole valid answers', async () => {
    const cache = createRpcCache(big.cache)
    const largeResult = JSON.stringify(Array.from({ length: 100 }, () => ({ data: `0x${'ff'.repeat(32)}` })))
    assert.ok(Buffer.byteLength(largeResult) > 4096)
    await cache.load(
      'large',
      'immutable',
      fromNode(async () => answerOf(largeResult)),
    )
    await cache.load(
      'small',
      'immutable',
      fromNode(async () => answerOf('"0x1"')),
    )

    // a large hit is the kept bytes themselves between the id's prefix and the closing brace: no copy
    const largeHit = cache.get('large', 'immutable', 'abc')
    assert.ok(largeHit instanceof AnswerParts)
    assert.deepEqual(parse(largeHit), { jsonrpc: '2.0', id: 'abc', result: JSON.parse(largeResult) })
    assert.ok(largeHit.toString().endsWith(`${largeResult}}`))
    const again = cache.get('large', 'immutable', 7)
    assert.ok(again instanceof AnswerParts)
    assert.equal(again.parts[1], largeHit.parts[1], 'the same kept bytes, not a copy')
    assert.equal(again.byteLength, Buffer.byteLength(again.toString()))

    const smallHit = cache.get('small', 'immutable', null)
    assert.equal(smallHit, '{"jsonrpc":"2.0","id":null,"result":"0x1"}')

    assert.equal(resultAnswer(5, Buffer.from('[1,2]')).toString(), '{"jsonrpc":"2.0","id":5,"result":[1,2]}')
    assert.equal(resultAnswer(5, '[1,2]'), '{"jsonrpc":"2.0","id":5,"result":[1,2]}')
  })

  it('error answers come back as {answer} and are never stored', async () => {
    const cache = createRpcCache(big.cache)
    const error = Buffer.from(
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"missing trie node"}}',
    )
    const loaded = await cache.load(
      'k',
      'immutable',
      fromNode(async () => error),
    )
    assert.deepEqual(loaded, { answer: error })
    assert.equal(cache.get('k', 'immutable', 1), undefined)
    assert.deepEqual([cache.stats.entries, cache.stats.bytes], [0, 0])
  })

  it('null results are served but never stored, however the node spaced them', async () => {
    const cache = createRpcCache(big.cache)
    for (const text of [
      '{"jsonrpc":"2.0","id":1,"result":null}',
      '{"jsonrpc":"2.0","id":1,"result": null}\n',
      '{"jsonrpc":"2.0","id":1,"result":null }',
      '{"id":1,"jsonrpc":"2.0","result":null}',
    ]) {
      const loaded = await cache.load(
        text,
        'immutable',
        fromNode(async () => Buffer.from(text)),
      )
      assert.equal(resultText(loaded).trim(), 'null', text)
      assert.equal(cache.get(text, 'immutable', 1), undefined, text)
    }
    assert.equal(cache.stats.entries, 0)
  })

  it('immutable entries survive a new head, head entries do not', async () => {
    const cache = createRpcCache(big.cache)
    await cache.load(
      'block',
      'immutable',
      fromNode(async () => answerOf('{"number":"0x1"}')),
    )
    await cache.load(
      'balance',
      'head',
      fromNode(async () => answerOf('"0x64"')),
    )
    assert.equal(cache.stats.entries, 2)
    assert.ok(cache.get('balance', 'head', 1))
    cache.newHead()
    assert.equal(cache.get('balance', 'head', 1), undefined)
    assert.deepEqual(parse(cache.get('block', 'immutable', 1)), {
      jsonrpc: '2.0',
      id: 1,
      result: { number: '0x1' },
    })
    assert.equal(cache.stats.entries, 1)
    const bytesWithBlockOnly = cache.stats.bytes
    cache.newHead()
    assert.equal(cache.stats.bytes, bytesWithBlockOnly)
  })

  it('does not keep a head-scoped result fetched across a new head, but does an immutable one', async () => {
    const cache = createRpcCache(big.cache)
    const headLoad = deferredLoader()
    const immutableLoad = deferredLoader()
    const headPending = cache.load('h', 'head', headLoad.load)
    const immutablePending = cache.load('i', 'immutable', immutableLoad.load)
    cache.newHead()
    headLoad.resolve(answerOf('"0x1"'))
    immutableLoad.resolve(answerOf('"0x2"'))
    // the caller still gets the answer
    assert.equal(resultText(await headPending), '"0x1"')
    assert.equal(resultText(await immutablePending), '"0x2"')
    assert.equal(cache.get('h', 'head', 1), undefined)
    assert.ok(cache.get('i', 'immutable', 1))
    assert.equal(cache.stats.entries, 1)
  })

  it('a forget or a new chain drops every immutable answer; a load in flight across it keeps nothing and is not joined', async () => {
    const cache = createRpcCache(big.cache)
    await cache.load(
      'block',
      'immutable',
      fromNode(async () => answerOf('"old"')),
    )
    await cache.load(
      'balance',
      'head',
      fromNode(async () => answerOf('"0x1"')),
    )
    const inFlight = deferredLoader()
    const pending = cache.load('receipt', 'immutable', inFlight.load)
    await cache.forget('a test')
    assert.deepEqual([cache.stats.entries, cache.stats.forgets], [1, 1])
    assert.equal(cache.get('block', 'immutable', 1), undefined)
    assert.ok(cache.get('balance', 'head', 1), 'head-scoped answers follow the heads')
    // a call made after it does not join the load of before
    const after = deferredLoader()
    const next = cache.load('receipt', 'immutable', after.load)
    assert.equal(after.calls, 1)
    inFlight.resolve(answerOf('"of before"'))
    assert.equal(resultText(await pending), '"of before"', 'its caller still gets it')
    assert.equal(cache.get('receipt', 'immutable', 1), undefined, 'not kept')
    after.resolve(answerOf('"of after"'))
    await next
    assert.ok(cache.get('receipt', 'immutable', 1))

    // the chain's identity: the first is news to no one, the same again neither, another drops all
    await cache.identify(`0x${'01'.repeat(32)}`)
    await cache.identify(`0x${'01'.repeat(32)}`)
    assert.equal(cache.stats.forgets, 1)
    assert.ok(cache.get('receipt', 'immutable', 1))
    await cache.identify(`0x${'02'.repeat(32)}`)
    assert.equal(cache.get('receipt', 'immutable', 1), undefined)
    assert.equal(cache.stats.forgets, 2)
  })

  describe('coalescing', () => {
    it('identical calls in flight run the loader once and all get its answer', async () => {
      const cache = createRpcCache(big.cache)
      const loader = deferredLoader()
      const calls = [1, 2, 3].map(() => cache.load('k', 'head', loader.load))
      assert.equal(loader.calls, 1)
      assert.equal(cache.stats.coalesced, 2)
      loader.resolve(answerOf('"0xabc"'))
      const answers = await Promise.all(calls)
      for (const answer of answers) assert.equal(resultText(answer), '"0xabc"')
      // a later call, once the first has ended, finds its answer kept (its get may have missed before:
      // it waited for one of its key's slots)
      const again = deferredLoader()
      const later = await cache.load('k', 'head', again.load)
      assert.equal(again.calls, 0)
      assert.equal(resultText(later), '"0xabc"')
      // once the head moves on, a new load
      cache.newHead()
      const next = cache.load('k', 'head', again.load)
      assert.equal(again.calls, 1)
      again.resolve(answerOf('"0xabd"'))
      assert.equal(resultText(await next), '"0xabd"')
      assert.equal(cache.stats.coalesced, 2)
    })

    it('different keys do not share a load', async () => {
      const cache = createRpcCache(big.cache)
      const a = deferredLoader()
      const b = deferredLoader()
      const pa = cache.load('a', 'head', a.load)
      const pb = cache.load('b', 'head', b.load)
      assert.deepEqual([a.calls, b.calls, cache.stats.coalesced], [1, 1, 0])
      a.resolve(answerOf('"a"'))
      b.resolve(answerOf('"b"'))
      assert.deepEqual([resultText(await pa), resultText(await pb)], ['"a"', '"b"'])
    })

    it('a call after a new head does not join a load started before it', async () => {
      const cache = createRpcCache(big.cache)
      const before = deferredLoader()
      const after = deferredLoader()
      const first = cache.load('k', 'head', before.load)
      cache.newHead()
      const second = cache.load('k', 'head', after.load)
      assert.deepEqual([before.calls, after.calls, cache.stats.coalesced], [1, 1, 0])
      // a third call joins the load made after the head
      const third = cache.load('k', 'head', after.load)
      assert.deepEqual([after.calls, cache.stats.coalesced], [1, 1])

      after.resolve(answerOf('"new"'))
      assert.equal(resultText(await second), '"new"')
      assert.equal(resultText(await third), '"new"')
      // the old load ending late does not remove the new one's result, nor replace it
      before.resolve(answerOf('"old"'))
      assert.equal(resultText(await first), '"old"')
      assert.deepEqual(parse(cache.get('k', 'head', 1)), { jsonrpc: '2.0', id: 1, result: 'new' })
    })

    it('an old load ending first does not drop the new in-flight load from coalescing', async () => {
      const cache = createRpcCache(big.cache)
      const before = deferredLoader()
      const after = deferredLoader()
      const first = cache.load('k', 'head', before.load)
      cache.newHead()
      const second = cache.load('k', 'head', after.load)
      before.resolve(answerOf('"old"'))
      await first
      const third = cache.load('k', 'head', after.load)
      assert.equal(after.calls, 1)
      after.resolve(answerOf('"new"'))
      assert.equal(resultText(await second), '"new"')
      assert.equal(resultText(await third), '"new"')
    })

    it('a rejected load rejects every caller that joined it and keeps nothing', async () => {
      const cache = createRpcCache(big.cache)
      const loader = deferredLoader()
      const calls = [1, 2, 3].map(() => cache.load('k', 'immutable', loader.load))
      const failure = new Error('upstream down')
      loader.reject(failure)
      for (const call of calls) await assert.rejects(call, (err) => err === failure)
      assert.equal(cache.get('k', 'immutable', 1), undefined)
      assert.deepEqual([cache.stats.entries, cache.stats.bytes], [0, 0])
      // the failed load is not joined by the next call
      const next = deferredLoader()
      const retried = cache.load('k', 'immutable', next.load)
      assert.equal(next.calls, 1)
      next.resolve(answerOf('"ok"'))
      assert.equal(resultText(await retried), '"ok"')
      assert.ok(cache.get('k', 'immutable', 1))
    })

    it('an immutable key loaded twice across a new head is counted once', async () => {
      const cache = createRpcCache(big.cache)
      const before = deferredLoader()
      const after = deferredLoader()
      const first = cache.load('k', 'immutable', before.load)
      cache.newHead()
      const second = cache.load('k', 'immutable', after.load)
      before.resolve(answerOf('"0x1234"'))
      after.resolve(answerOf('"0x1234"'))
      await Promise.all([first, second])
      assert.equal(cache.stats.entries, 1)
      const bytesOfOne = cache.stats.bytes
      // the same size as that entry stored alone
      const alone = createRpcCache(big.cache)
      await alone.load(
        'k',
        'immutable',
        fromNode(async () => answerOf('"0x1234"')),
      )
      assert.equal(bytesOfOne, alone.stats.bytes)
    })

    it('calls join only loads of their own group', async () => {
      const cache = createRpcCache(big.cache)
      const plain = deferredLoader()
      const failover = deferredLoader()
      const first = cache.load('k', 'head', plain.load)
      const second = cache.load('k', 'head', failover.load, 'failover')
      const third = cache.load('k', 'head', failover.load, 'failover')
      assert.deepEqual([plain.calls, failover.calls, cache.stats.coalesced], [1, 1, 1])
      plain.resolve(answerOf('"a"'))
      failover.resolve(answerOf('"b"'))
      assert.deepEqual(
        [resultText(await first), resultText(await second), resultText(await third)],
        ['"a"', '"b"', '"b"'],
      )
    })

    it("a partner's answer reaches every caller of its load, marked, and is never kept", async () => {
      const cache = createRpcCache(big.cache)
      let resolve: (answer: SentAnswer) => void = () => {}
      const load = () => new Promise<SentAnswer>((res) => (resolve = res))
      const calls = [1, 2].map(() => cache.load('k', 'immutable', load, 'failover'))
      resolve(new PartnerAnswer(answerOf('"0xfeed"')))
      for (const call of calls) assert.deepEqual(await call, { result: '"0xfeed"', partner: true })
      assert.equal(cache.get('k', 'immutable', 1), undefined)
      assert.equal(cache.stats.entries, 0)
    })
  })

  describe('the byte bound', () => {
    async function fill(cache: ReturnType<typeof createRpcCache>, key: string, scope: 'immutable' | 'head') {
      await cache.load(
        key,
        scope,
        fromNode(async () => answerOf(JSON.stringify('x'.repeat(98)))),
      )
    }

    it('evicts the least recently used immutable entries first, a get counting as a use', async () => {
      const size = await measured('k0', 100)
      const cache = createRpcCache({ maxBytes: size * 3, maxEntryBytes: size * 3 })
      for (const key of ['k0', 'k1', 'k2']) await fill(cache, key, 'immutable')
      assert.deepEqual([cache.stats.entries, cache.stats.bytes, cache.stats.evictions], [3, size * 3, 0])
      // k0 becomes the most recently used: k1 is now the oldest
      assert.ok(cache.get('k0', 'immutable', 1))
      await fill(cache, 'k3', 'immutable')
      assert.equal(cache.stats.evictions, 1)
      assert.equal(cache.get('k1', 'immutable', 1), undefined)
      for (const key of ['k0', 'k2', 'k3']) assert.ok(cache.get(key, 'immutable', 1), key)
      // order of use now: k0, k2, k3 → the next two stores evict k0 then k2
      await fill(cache, 'k4', 'immutable')
      await fill(cache, 'k5', 'immutable')
      assert.equal(cache.get('k0', 'immutable', 1), undefined)
      assert.equal(cache.get('k2', 'immutable', 1), undefined)
      for (const key of ['k3', 'k4', 'k5']) assert.ok(cache.get(key, 'immutable', 1), key)
      assert.equal(cache.stats.evictions, 3)
      assert.ok(cache.stats.bytes <= size * 3)
    })

    it('bytes never exceeds maxBytes, whatever the mix of scopes and sizes', async () => {
      const maxBytes = 5000
      const cache = createRpcCache({ maxBytes, maxEntryBytes: 3000 })
      // xorshift32: the same sequence every run
      let seed = 2463534242
      const random = (n: number) => {
        seed ^= seed << 13
        seed ^= seed >>> 17
        seed ^= seed << 5
        return (seed >>> 0) % n
      }
      for (let i = 0; i < 400; i++) {
        const key = `key${random(40)}`
        const scope = random(3) === 0 ? 'head' : 'immutable'
        if (random(25) === 0) cache.newHead()
        else if (random(2) === 0) cache.get(key, scope, i)
        else
          await cache.load(
            key,
            scope,
            fromNode(async () => answerOf(JSON.stringify('y'.repeat(random(2500))))),
          )
        assert.ok(cache.stats.bytes <= maxBytes, `${cache.stats.bytes} > ${maxBytes} at step ${i}`)
        assert.ok(cache.stats.bytes >= 0, `negative bytes at step ${i}`)
      }
      assert.ok(cache.stats.evictions > 0, 'no evictions')
      // the counts still match what is kept: drop the head entries, then push every immutable one out
      cache.newHead()
      const last = JSON.stringify('w'.repeat(2800))
      await cache.load(
        'last',
        'immutable',
        fromNode(async () => answerOf(last)),
      )
      await cache.load(
        'lest',
        'immutable',
        fromNode(async () => answerOf(last)),
      )
      assert.equal(cache.stats.entries, 1)
      const alone = createRpcCache({ maxBytes, maxEntryBytes: 3000 })
      await alone.load(
        'lest',
        'immutable',
        fromNode(async () => answerOf(last)),
      )
      assert.equal(cache.stats.bytes, alone.stats.bytes)
    })

    it('does not keep an entry larger than maxEntryBytes, nor evict for it', async () => {
      const size = await measured('small', 100)
      const cache = createRpcCache({ maxBytes: 100_000, maxEntryBytes: size + 50 })
      await fill(cache, 'small', 'immutable')
      const huge = JSON.stringify('z'.repeat(200))
      const loaded = await cache.load(
        'huge',
        'immutable',
        fromNode(async () => answerOf(huge)),
      )
      assert.equal(resultText(loaded), huge)
      assert.equal(cache.get('huge', 'immutable', 1), undefined)
      assert.ok(cache.get('small', 'immutable', 1))
      assert.deepEqual([cache.stats.entries, cache.stats.bytes, cache.stats.evictions], [1, size, 0])
    })

    it('head entries are not evicted, and do not make the immutable ones go for nothing', async () => {
      const size = await measured('h0', 100)
      const cache = createRpcCache({ maxBytes: size * 3, maxEntryBytes: size * 3 })
      await fill(cache, 'i0', 'immutable')
      await fill(cache, 'h0', 'head')
      await fill(cache, 'h1', 'head')
      // full: a head entry can make room by evicting an immutable one
      await fill(cache, 'h2', 'head')
      assert.equal(cache.get('i0', 'immutable', 1), undefined)
      assert.deepEqual([cache.stats.entries, cache.stats.evictions], [3, 1])
      // now all head: nothing more fits until the next head
      await fill(cache, 'h3', 'head')
      await fill(cache, 'i1', 'immutable')
      assert.equal(cache.get('h3', 'head', 1), undefined)
      assert.equal(cache.get('i1', 'immutable', 1), undefined)
      assert.deepEqual([cache.stats.entries, cache.stats.bytes], [3, size * 3])
      cache.newHead()
      assert.deepEqual([cache.stats.entries, cache.stats.bytes], [0, 0])
      await fill(cache, 'i1', 'immutable')
      assert.ok(cache.get('i1', 'immutable', 1))
    })

    it('stats follow evictions even when the new entry does not fit after all', async () => {
      const size = await measured('k0', 100)
      const cache = createRpcCache({ maxBytes: size * 2, maxEntryBytes: size * 2 })
      await fill(cache, 'h0', 'head')
      await fill(cache, 'i0', 'immutable')
      // a larger head entry cannot fit beside h0 even with i0 gone: i0 stays
      await cache.load(
        'h1',
        'head',
        fromNode(async () => answerOf(JSON.stringify('x'.repeat(150)))),
      )
      assert.ok(cache.get('i0', 'immutable', 1), 'i0 was evicted')
      assert.deepEqual([cache.stats.entries, cache.stats.bytes, cache.stats.evictions], [2, size * 2, 0])
    })

    /** The bytes one entry of a `resultBytes` result under a key as long as `key` counts for. */
    async function measured(key: string, resultBytes: number): Promise<number> {
      const probe = createRpcCache(big.cache)
      await probe.load(
        key,
        'immutable',
        fromNode(async () => answerOf(JSON.stringify('x'.repeat(resultBytes - 2)))),
      )
      return probe.stats.bytes
    }
  })
})

function resultOf(loaded: LoadedAnswer): string | Buffer {
  assert.ok('result' in loaded)
  return loaded.result
}

describe('createRpcCache: answers pinned to a block the chain has not seen', () => {
  it('an answer by hash naming a block above the chain tip is not kept; one at or below it is', async () => {
    let tip = 10n
    const cache = createRpcCache({ ...big.cache, chainTip: () => tip })
    const hash = `0x${'ab'.repeat(32)}`
    const key = `eth_getBlockByHash["${hash}",false]`
    const block = (number: number) => answerOf(`{"number":"0x${number.toString(16)}","hash":"${hash}"}`)
    await cache.load(
      key,
      'immutable',
      fromNode(async () => block(11)),
    )
    assert.equal(cache.get(key, 'immutable', 1), undefined, 'block 11, above the tip: not kept')
    tip = 11n
    await cache.load(
      key,
      'immutable',
      fromNode(async () => block(11)),
    )
    assert.deepEqual(parse(cache.get(key, 'immutable', 1)), {
      jsonrpc: '2.0',
      id: 1,
      result: { number: '0xb', hash },
    })
    // a receipt's blockNumber counts the same; a key without a hash is not asked
    const receipt = `eth_getTransactionReceipt["0x${'cd'.repeat(32)}"]`
    await cache.load(
      receipt,
      'immutable',
      fromNode(async () => answerOf('{"blockNumber":"0x20"}')),
    )
    assert.equal(cache.get(receipt, 'immutable', 1), undefined)
    await cache.load(
      'eth_chainId[]',
      'immutable',
      fromNode(async () => answerOf('"0x1"')),
    )
    assert.ok(cache.get('eth_chainId[]', 'immutable', 1))
  })

  it('an empty list by a block hash is kept only once the chain has linked that block', async () => {
    const linked = new Set<string>()
    const cache = createRpcCache({ ...big.cache, chainTip: () => 10n, hasBlock: (hash) => linked.has(hash) })
    const hash = `0x${'ef'.repeat(32)}`
    const key = `eth_getLogs[{"blockHash":"${hash}"}]`
    await cache.load(
      key,
      'immutable',
      fromNode(async () => answerOf('[]')),
    )
    assert.equal(cache.get(key, 'immutable', 1), undefined, 'a block the chain has not seen')
    linked.add(hash)
    await cache.load(
      key,
      'immutable',
      fromNode(async () => answerOf('[]')),
    )
    assert.ok(cache.get(key, 'immutable', 1))
  })
})

describe('createRpcCache: answers kept while their block stays on the chain', () => {
  const blockHash = (byte: string) => `0x${byte.repeat(32)}`
  const txKey = `eth_getTransactionReceipt["0x${'cd'.repeat(32)}"]`
  const receipt = (hash: string, number: string) =>
    answerOf(`{"transactionHash":"0x${'cd'.repeat(32)}","blockHash":"${hash}","blockNumber":"${number}"}`)

  it('a mined receipt is kept across heads while the chain has its block, dropped when that block leaves', async () => {
    const chain = new Map([[16n, blockHash('aa')]])
    const cache = createRpcCache({ ...big.cache, blockHashAt: (number) => chain.get(number) })
    const loader = deferredLoader()
    const loading = cache.load(txKey, 'mined', loader.load)
    loader.resolve(receipt(blockHash('aa'), '0x10'))
    await loading
    cache.newHead()
    assert.ok(cache.get(txKey, 'mined', 7), 'kept across a new head')
    // another block's hash in the same key space does not touch it
    cache.dropBlock(blockHash('bb'))
    assert.ok(cache.get(txKey, 'mined', 7))
    cache.dropBlock(blockHash('AA'))
    assert.equal(cache.get(txKey, 'mined', 7), undefined, 'its block left the chain')
  })

  it('a receipt naming a block the chain does not have (another branch, above its tip) is not kept', async () => {
    const chain = new Map([[16n, blockHash('aa')]])
    const cache = createRpcCache({ ...big.cache, blockHashAt: (number) => chain.get(number) })
    await cache.load(
      txKey,
      'mined',
      fromNode(async () => receipt(blockHash('bb'), '0x10')),
    )
    assert.equal(cache.get(txKey, 'mined', 1), undefined, 'another branch')
    await cache.load(
      txKey,
      'mined',
      fromNode(async () => receipt(blockHash('cc'), '0x11')),
    )
    assert.equal(cache.get(txKey, 'mined', 1), undefined, 'above the tip')
  })

  it('not mined yet (null, a pending transaction) is kept until the next head', async () => {
    const cache = createRpcCache({ ...big.cache, blockHashAt: () => undefined })
    await cache.load(
      txKey,
      'mined',
      fromNode(async () => answerOf('null')),
    )
    assert.deepEqual(parse(cache.get(txKey, 'mined', 3)), { jsonrpc: '2.0', id: 3, result: null })
    cache.newHead()
    assert.equal(cache.get(txKey, 'mined', 3), undefined)
    const pending = '{"hash":"0x01","blockHash":null,"blockNumber":null}'
    await cache.load(
      'eth_getTransactionByHash["0x01"]',
      'mined',
      fromNode(async () => answerOf(pending)),
    )
    assert.ok(cache.get('eth_getTransactionByHash["0x01"]', 'mined', 1))
    cache.newHead()
    assert.equal(cache.get('eth_getTransactionByHash["0x01"]', 'mined', 1), undefined)
  })

  it('a load of a mined receipt across a dropped block is not kept', async () => {
    const chain = new Map([[16n, blockHash('aa')]])
    const cache = createRpcCache({ ...big.cache, blockHashAt: (number) => chain.get(number) })
    const loader = deferredLoader()
    const loading = cache.load(txKey, 'mined', loader.load)
    cache.dropBlock(blockHash('99'))
    loader.resolve(receipt(blockHash('aa'), '0x10'))
    await loading
    assert.equal(cache.get(txKey, 'mined', 1), undefined)
  })

  it('an answer under a block-pinned key is kept across heads and dropped with its block', async () => {
    const cache = createRpcCache(big.cache)
    const key = `eth_call[{"to":"0x01"},"0x10"]@${blockHash('aa')}`
    await cache.load(
      key,
      'immutable',
      fromNode(async () => answerOf('"0x2a"')),
    )
    cache.newHead()
    cache.newHead()
    assert.ok(cache.get(key, 'immutable', 1))
    cache.dropBlock(blockHash('aa'))
    assert.equal(cache.get(key, 'immutable', 1), undefined)
  })
})

describe('createRpcCache: with a shared store', () => {
  /** A shared store in memory: what was put, with its ttl, and gets of it. */
  function memoryStore() {
    const values = new Map<string, { value: string; ttlMs: number | undefined }>()
    const store = {
      lookup: async (key: string): Promise<Buffer | 'load'> => {
        const kept = values.get(key)
        return kept ? Buffer.from(kept.value) : 'load'
      },
      release: () => {},
      put: (key: string, value: string | Buffer, ttlMs?: number) => {
        values.set(key, { value: value.toString(), ttlMs })
      },
      identify: async () => {},
      forget: async () => {},
      dropBlock: () => {},
      onChange: () => () => {},
    }
    return { store, values }
  }
  const head = `0x${'12'.repeat(32)}`

  it("an answer of the head is shared under the head's hash, for as long as a head lasts, and read by another instance at that head", async () => {
    const { store, values } = memoryStore()
    const first = createRpcCache({ ...big.cache, shared: store, headHash: () => head })
    await first.load(
      'eth_gasPrice[]',
      'head',
      fromNode(async () => answerOf('"0x7"')),
    )
    const kept = values.get(`eth_gasPrice[]@${head}`)
    assert.equal(kept?.value, '"0x7"')
    assert.ok(kept?.ttlMs !== undefined && kept.ttlMs <= 60_000, 'a short ttl')

    const second = createRpcCache({ ...big.cache, shared: store, headHash: () => head })
    const loaded = await second.load(
      'eth_gasPrice[]',
      'head',
      fromNode(async () => assert.fail('the node is not asked')),
    )
    assert.equal(resultText(loaded), '"0x7"')
    assert.equal(second.stats.sharedHits, 1)
    // at another head, not read
    const third = createRpcCache({ ...big.cache, shared: store, headHash: () => `0x${'34'.repeat(32)}` })
    const fresh = await third.load(
      'eth_gasPrice[]',
      'head',
      fromNode(async () => answerOf('"0x8"')),
    )
    assert.equal(resultText(fresh), '"0x8"')
  })

  it('an answer of the head loaded across a new head is not shared', async () => {
    const { store, values } = memoryStore()
    const cache = createRpcCache({ ...big.cache, shared: store, headHash: () => head })
    const loader = deferredLoader()
    const loading = cache.load('eth_gasPrice[]', 'head', loader.load)
    await Promise.resolve()
    cache.newHead()
    loader.resolve(answerOf('"0x7"'))
    await loading
    assert.equal(values.size, 0)
  })

  it('a mined receipt from the shared store is read only when the chain has its block', async () => {
    const { store } = memoryStore()
    const key = `eth_getTransactionReceipt["0x${'cd'.repeat(32)}"]`
    const onChain = `0x${'aa'.repeat(32)}`
    store.put(key, `{"blockHash":"${`0x${'bb'.repeat(32)}`}","blockNumber":"0x10"}`)
    const cache = createRpcCache({ ...big.cache, shared: store, blockHashAt: () => onChain })
    const loaded = await cache.load(
      key,
      'mined',
      fromNode(async () => answerOf(`{"blockHash":"${onChain}","blockNumber":"0x10"}`)),
    )
    assert.match(resultText(loaded), /aaaa/, 'the node asked: the shared one is of another branch')
    assert.equal(cache.stats.sharedHits, 0)
  })
})

describe('createRpcCache: an answer pinned to a block number, asked by number', () => {
  const ours = `0x${'aa'.repeat(32)}`
  const theirs = `0x${'bb'.repeat(32)}`
  const key = cacheKey('eth_getBlockByNumber', '["0x10",false]', ours)

  it("is kept under the block's hash when it names that block, across heads, until the block leaves", async () => {
    const cache = createRpcCache(big.cache)
    await cache.load(
      key,
      'pinned',
      fromNode(async () => answerOf(`{"number":"0x10","hash":"${ours}"}`)),
    )
    cache.newHead()
    assert.ok(cache.get(key, 'pinned', 1))
    cache.dropBlock(ours)
    assert.equal(cache.get(key, 'pinned', 1), undefined)
  })

  it("is kept only until the next head when it names another branch's block, or none", async () => {
    const cache = createRpcCache(big.cache)
    await cache.load(
      key,
      'pinned',
      fromNode(async () => answerOf(`{"number":"0x10","hash":"${theirs}"}`)),
    )
    assert.ok(cache.get(key, 'pinned', 1), 'the node said so: until the next head')
    cache.newHead()
    assert.equal(cache.get(key, 'pinned', 1), undefined)
    const count = cacheKey('eth_getBlockTransactionCountByNumber', '["0x10"]', ours)
    await cache.load(
      count,
      'pinned',
      fromNode(async () => answerOf('"0x3"')),
    )
    cache.newHead()
    assert.equal(cache.get(count, 'pinned', 1), undefined)
  })
})
