import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type InvalidRequestError, ParseError } from '../errors/rpcErrors.ts'
import { asWrittenBody, parseRpcRequest } from './parseRpcRequest.ts'
import { withRawIds } from './withRawIds.ts'

const options = { maxBatchSize: 3, maxJsonDepth: 64 }

describe('parseRpcRequest', () => {
  it('an id JSON would write otherwise gets a stand-in and its text is kept; other ids are left alone', () => {
    const plain = parseRpcRequest('{"jsonrpc": "2.0", "id": 12, "method": "m", "params": []}', options)
    assert.equal(plain.rawIds, undefined)
    const single = parseRpcRequest(
      '{"jsonrpc": "2.0", "id": 12345678901234567890123, "method": "m"}',
      options,
    )
    assert.deepEqual(single.rawIds, ['12345678901234567890123'])
    const call = !single.isBatch && 'call' in single.entry ? single.entry.call : undefined
    assert.equal(typeof call?.id, 'string')
    assert.equal(call?.text, undefined, 'not forwarded as written: the node gets the stand-in')
    assert.equal(
      withRawIds(JSON.stringify({ jsonrpc: '2.0', id: call?.id, result: '0x1' }), single.rawIds ?? []),
      '{"jsonrpc":"2.0","id":12345678901234567890123,"result":"0x1"}',
    )
    const batch = parseRpcRequest(
      '[{"jsonrpc":"2.0","id":1,"method":"m"},{"jsonrpc":"1","id":-0,"method":"m"}]',
      {
        ...options,
      },
    )
    assert.deepEqual(batch.rawIds, ['-0'])
    assert.ok(batch.isBatch)
    const [first, second] = batch.entries
    assert.equal(first && 'call' in first ? first.call.id : undefined, 1)
    assert.equal(typeof (second && 'error' in second ? second.id : undefined), 'string')
  })

  it('parses a single call, with params defaulting to []', () => {
    const text = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}'
    assert.deepEqual(parseRpcRequest(text, options), {
      isBatch: false,
      entry: {
        call: {
          id: 1,
          method: 'eth_chainId',
          params: [],
          isNotification: false,
          text,
          bytes: undefined,
          stringified: true,
          envelope: undefined,
          plainEnvelope: false,
          readsAsWritten: undefined,
        },
      },
    })
  })

  it('reads a body as JSON.parse does, whether readStringified reads it or not', () => {
    const calls = [
      { jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: '0x01' }, 'latest'] },
      { method: 'eth_chainId', params: [], id: 'a', jsonrpc: '2.0' },
      { jsonrpc: '2.0', method: 'm', params: [] },
      { jsonrpc: '2.0', id: null, method: 'm', params: null },
      { jsonrpc: '2.0', id: 2, method: 'm' },
      { jsonrpc: '1.0', id: 3, method: 'm', params: [] },
      { jsonrpc: '2.0', id: 4, method: 'm', params: { a: 1 } },
      { jsonrpc: '2.0', id: 5, method: 'm', params: [], extra: true },
      { jsonrpc: '2.0', id: true, method: 'm' },
      {},
    ]
    /** What a call's entry comes to, leaving out how its text was read. */
    const read = (body: string) => {
      const request = parseRpcRequest(body, { ...options, maxBatchSize: 20 })
      const entries = request.isBatch ? request.entries : [request.entry]
      return entries.map((entry) => {
        if ('error' in entry) return { id: entry.id, error: entry.error.message }
        const { id, method, params, isNotification, plainEnvelope } = entry.call
        return { id, method, params, isNotification, plainEnvelope }
      })
    }
    // both readers are at work: readStringified takes the first body as written, JSON.parse the spaced one
    const first = JSON.stringify(calls[0])
    const stringifiedOf = (body: string) => {
      const request = parseRpcRequest(body, options)
      return !request.isBatch && 'call' in request.entry && request.entry.call.stringified
    }
    assert.equal(stringifiedOf(first), true)
    assert.equal(stringifiedOf(`${first[0]} ${first.slice(1)}`), false)
    for (const body of [...calls.map((call) => JSON.stringify(call)), JSON.stringify(calls)]) {
      // a space after the first character: the same body, which readStringified leaves to JSON.parse
      const spaced = `${body[0]} ${body.slice(1)}`
      assert.deepEqual(read(body), read(spaced), body)
    }
  })

  it('a call without id is a notification; id null is a call', () => {
    const notification = parseRpcRequest('{"jsonrpc":"2.0","method":"m","params":[]}', options)
    assert.equal(
      !notification.isBatch && 'call' in notification.entry && notification.entry.call.isNotification,
      true,
    )
    const nullId = parseRpcRequest('{"jsonrpc":"2.0","id":null,"method":"m"}', options)
    assert.equal(!nullId.isBatch && 'call' in nullId.entry && nullId.entry.call.isNotification, false)
  })

  it('throws a parse error for bodies that are not JSON, including hostile ones', () => {
    for (const body of ['', '{', 'nul', '[1,]', '\u0000', '['.repeat(64), `"${'['.repeat(1_000)}`]) {
      assert.throws(() => parseRpcRequest(body, options), ParseError)
    }
  })

  it('refuses a body nested deeper than maxJsonDepth before parsing it, envelope levels included', () => {
    const call = (depth: number) => {
      // the envelope object and its params array are two levels; the argument brings the rest
      let argument = '1'
      for (let level = 2; level < depth; level++) argument = `{"a":${argument}}`
      return `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[${argument}]}`
    }
    assert.ok(!parseRpcRequest(call(64), options).isBatch)
    // a deep tail after a whole call (stray closers first) is refused for its depth too, not parsed
    const deepTail = `${call(3)}${']'.repeat(100)}${'['.repeat(150)}`
    for (const body of [call(65), `[${call(3)},${call(64)}]`, '['.repeat(100_000), deepTail]) {
      assert.throws(
        () => parseRpcRequest(body, options),
        (err: InvalidRequestError) =>
          err.code === -32600 && err.message === 'invalid request: JSON nested deeper than 64 levels',
      )
    }
    // the limit is the option's, and its number is in the message
    assert.throws(
      () => parseRpcRequest(call(5), { ...options, maxJsonDepth: 4 }),
      (err: InvalidRequestError) => err.message === 'invalid request: JSON nested deeper than 4 levels',
    )
  })

  it('throws for an empty batch', () => {
    assert.throws(
      () => parseRpcRequest('[]', options),
      (err: InvalidRequestError) => err.message === 'empty batch',
    )
  })

  it('answers a batch over the limit with one error element', () => {
    const request = parseRpcRequest(
      JSON.stringify(new Array(4).fill({ jsonrpc: '2.0', id: 1, method: 'm' })),
      options,
    )
    assert.ok(request.isBatch)
    assert.equal(request.entries.length, 1)
    const [entry] = request.entries
    assert.equal(entry && 'error' in entry && entry.error.message, 'batch too large')
  })

  it('marks envelope errors per element, keeping a readable id', () => {
    const request = parseRpcRequest(
      JSON.stringify([
        { jsonrpc: '1.0', id: 1, method: 'm' },
        { jsonrpc: '2.0', id: [1], method: 'm' },
        { jsonrpc: '2.0', id: 'x', method: 5 },
      ]),
      options,
    )
    assert.ok(request.isBatch)
    assert.deepEqual(
      request.entries.map((entry) => ('error' in entry ? [entry.id, entry.error.code] : 'call')),
      [
        [1, -32600],
        [null, -32600],
        ['x', -32600],
      ],
    )
  })

  it('refuses params that are not an array, and ids that are not string, number or null', () => {
    for (const body of [
      { jsonrpc: '2.0', id: 1, method: 'm', params: { a: 1 } },
      { jsonrpc: '2.0', id: true, method: 'm' },
      { jsonrpc: '2.0', id: {}, method: 'm' },
      { jsonrpc: '2.0', id: 1, method: '' },
    ]) {
      const request = parseRpcRequest(JSON.stringify(body), options)
      assert.ok(!request.isBatch && 'error' in request.entry, JSON.stringify(body))
    }
  })

  it('forwards as written the text of a single call a node reads as JSON.parse does, and only that', () => {
    const text = '{"jsonrpc":"2.0","id":42,"method":"eth_getBalance","params":["0x01", "latest"]}'
    const request = parseRpcRequest(text, options)
    assert.ok(!request.isBatch && 'call' in request.entry)
    assert.equal(request.entry.call.readsAsWritten, undefined) // read when forwarded, not before
    assert.equal(asWrittenBody(request.entry.call), text)
    assert.equal(request.entry.call.readsAsWritten, true)
    // the bytes it came in, when given: forwarded without being encoded again
    const bytes = Buffer.from(text)
    const fromBytes = parseRpcRequest(text, options, bytes)
    assert.ok(!fromBytes.isBatch && 'call' in fromBytes.entry)
    assert.equal(asWrittenBody(fromBytes.entry.call), bytes)
    const textOf = (body: string) => {
      const parsed = parseRpcRequest(body, options)
      return !parsed.isBatch && 'call' in parsed.entry ? asWrittenBody(parsed.entry.call) : 'not a call'
    }
    // written as JSON.stringify writes it, members in any order (ethers' and cast's order here)
    const stringified = JSON.stringify({
      method: 'eth_call',
      params: [{ to: '0x01' }, 'latest'],
      id: 7,
      jsonrpc: '2.0',
    })
    assert.equal(textOf(stringified), stringified)
    // a member repeated inside the params (JSON.parse keeps the last, a node may keep the first)
    assert.equal(
      textOf('{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x01","to":"0x02"}]}'),
      undefined,
    )
    assert.equal(
      textOf('{"jsonrpc":"2.0","id":1,"method":"m","params":[],"method":"eth_sendTransaction"}'),
      undefined,
    )
    // a fifth member, even written as JSON.stringify writes it (a node may match names ignoring case)
    const fifth = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_call',
      params: [],
      METHOD: 'eth_sendTransaction',
    })
    assert.equal(textOf(fifth), undefined)
    assert.equal(textOf(fifth.replace(',"METHOD"', ' ,"METHOD"')), undefined)
    // no params where a node may read some: `Params` is a fourth member, not the params
    const capital = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_call', Params: [{ to: '0x01' }] })
    assert.equal(textOf(capital), undefined)
    // an id written otherwise than serialising it writes it (the node gets the parsed id, as before)
    assert.equal(textOf('{"jsonrpc":"2.0","id":"\\u0041","method":"m","params":[]}'), undefined)
    // notifications and batches are always written anew
    assert.equal(textOf('{"jsonrpc":"2.0","method":"m","params":[]}'), undefined)
    const batch = parseRpcRequest(`[${text}]`, options)
    assert.ok(batch.isBatch && 'call' in (batch.entries[0] ?? {}))
    assert.equal(
      batch.isBatch && batch.entries[0] && 'call' in batch.entries[0] && asWrittenBody(batch.entries[0].call),
      undefined,
    )
    // numbers JSON.stringify would write otherwise, and a depth checked before parsing only
    assert.equal(textOf('{"jsonrpc":"2.0","id":1,"method":"m","params":[1.0]}'), undefined)
    assert.equal(textOf('{"jsonrpc":"2.0","id":1,"method":"m","params":[1e3]}'), undefined)
    const deep = `{"jsonrpc":"2.0","id":1,"method":"m","params":${'['.repeat(70)}${']'.repeat(70)}}`
    assert.throws(() => parseRpcRequest(deep, options), /nested deeper than 64/)
  })
})
