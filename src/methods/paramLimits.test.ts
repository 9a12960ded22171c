import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { getMethodSpec } from './methodTable.ts'
import { paramLimits } from './paramLimits.ts'
import { parseParams } from './params.ts'

const addr = `0x${'cd'.repeat(20)}`
const word = `0x${'ab'.repeat(32)}`
const txHash = `0x${'12'.repeat(32)}`

/** Through each method's row of the table: the limit is where the method's params are read. */
const parse = (method: string, params: unknown[]) => parseParams(getMethodSpec(method).params, params)
const accepts = (method: string, params: unknown[]) => assert.doesNotThrow(() => parse(method, params))
function refuses(method: string, params: unknown[], message: string | RegExp): void {
  assert.throws(() => parse(method, params), { code: -32602, message })
}

const times = <T>(count: number, make: (at: number) => T): T[] =>
  Array.from({ length: count }, (_, at) => make(at))
const addressAt = (at: number) => `0x${at.toString(16).padStart(40, '0')}`
const wordAt = (at: number) => `0x${at.toString(16).padStart(64, '0')}`
const mapOf = <T>(count: number, key: (at: number) => string, value: (at: number) => T) =>
  Object.fromEntries(times(count, (at) => [key(at), value(at)]))

describe('parameter limits, at and just past each (docs/compatibility.md §7)', () => {
  it('eth_feeHistory: 100 reward percentiles', () => {
    accepts('eth_feeHistory', ['0x4', 'latest', times(100, (at) => at)])
    refuses(
      'eth_feeHistory',
      ['0x4', 'latest', times(101, (at) => at / 2)],
      'invalid argument 2: too many reward percentiles, the limit is 100',
    )
    refuses('eth_feeHistory', ['0x4', 'latest', times(400_000, () => 50)], /the limit is 100$/)
    accepts('eth_feeHistory', ['0x400', 'latest', [50]])
    refuses(
      'eth_feeHistory',
      ['0x401', 'latest', [50]],
      'invalid argument 0: block count too large, the limit is 1024 blocks',
    )
  })

  it('log filters of eth_getLogs and eth_newFilter: 1000 addresses, 4 topic positions, 1000 alternatives each', () => {
    for (const method of ['eth_getLogs', 'eth_newFilter']) {
      accepts(method, [{ address: times(1000, addressAt) }])
      refuses(
        method,
        [{ address: times(1001, addressAt) }],
        'invalid argument 0: too many addresses, the limit is 1000',
      )
      accepts(method, [{ topics: [word, null, [word], word] }])
      refuses(
        method,
        [{ topics: [null, null, null, null, null] }],
        'invalid argument 0: too many topic positions, the limit is 4',
      )
      accepts(method, [{ topics: [null, times(1000, wordAt)] }])
      refuses(
        method,
        [{ topics: [null, times(1001, wordAt)] }],
        'invalid argument 0: too many alternatives in topic position 1, the limit is 1000',
      )
      refuses(method, [{ address: [addr, '0x12'] }], 'invalid argument 0: invalid field address')
    }
  })

  it('eth_simulateV1: 256 blocks, 5000 calls a block, 10,000 in all, each a call object', () => {
    const blocks = (count: number, calls = 0) => ({
      blockStateCalls: times(count, () => ({ calls: times(calls, () => ({ to: addr })) })),
    })
    accepts('eth_simulateV1', [blocks(256)])
    refuses(
      'eth_simulateV1',
      [blocks(257)],
      'invalid argument 0: too many blocks in blockStateCalls, the limit is 256',
    )
    accepts('eth_simulateV1', [blocks(2, 5000)])
    refuses(
      'eth_simulateV1',
      [blocks(1, 5001)],
      'invalid argument 0: too many calls in one block, the limit is 5000',
    )
    const tooMany = blocks(3, 5000)
    refuses('eth_simulateV1', [tooMany], 'invalid argument 0: too many calls, the limit is 10000')
    refuses(
      'eth_simulateV1',
      [{ blockStateCalls: [{ calls: [{ to: '0x12' }] }] }],
      'invalid argument 0: invalid field to',
    )
    refuses('eth_simulateV1', [{}], 'invalid argument 0: expected blockStateCalls, an array of blocks')
    refuses(
      'eth_simulateV1',
      [{ blockStateCalls: [{ stateOverrides: { [addr]: { code: '0x1' } } }] }],
      'invalid argument 0: invalid field code',
    )
    refuses(
      'eth_simulateV1',
      [{ blockStateCalls: [{ blockOverrides: { time: '0x01' } }] }],
      'invalid argument 0: invalid field time',
    )
    refuses(
      'eth_simulateV1',
      [{ blockStateCalls: [], validation: 'yes' }],
      'invalid argument 0: invalid field validation',
    )
  })

  it('state overrides: 1000 accounts, 10,000 slots an account, code of 98,304 bytes, each field in form', () => {
    const call = (overrides: unknown): [string, unknown[]] => [
      'eth_call',
      [{ to: addr }, 'latest', overrides],
    ]
    accepts(...call(mapOf(1000, addressAt, () => ({ balance: '0x1' }))))
    refuses(
      ...call(mapOf(1001, addressAt, () => ({}))),
      'invalid argument 2: too many accounts in the state override, the limit is 1000',
    )
    for (const name of ['state', 'stateDiff']) {
      accepts(...call({ [addr]: { [name]: mapOf(10_000, wordAt, () => word) } }))
      refuses(
        ...call({ [addr]: { [name]: mapOf(10_001, wordAt, () => word) } }),
        `invalid argument 2: too many storage slots in one account's ${name}, the limit is 10000`,
      )
    }
    accepts(...call({ [addr]: { code: `0x${'60'.repeat(98_304)}` } }))
    refuses(
      ...call({ [addr]: { code: `0x${'60'.repeat(98_305)}` } }),
      'invalid argument 2: code too large, the limit is 98304 bytes',
    )
    for (const [overrides, why] of [
      [{ '0x12': {} }, 'expected 20-byte addresses as state override keys'],
      [{ [addr]: { state: { '0x1': word } } }, 'invalid field state'],
      [{ [addr]: { stateDiff: { [word]: '0x1' } } }, 'invalid field stateDiff'],
      [{ [addr]: { balance: `0x1${'0'.repeat(64)}` } }, 'invalid field balance'],
      [{ [addr]: { nonce: '0x01' } }, 'invalid field nonce'],
      [{ [addr]: { movePrecompileToAddress: '0x1' } }, 'invalid field movePrecompileToAddress'],
      [{ [addr]: { state: {}, stateDiff: {} } }, `account ${addr} has both state and stateDiff`],
      [{ [addr]: 'x' }, 'expected an object, got a string'],
    ] as const) {
      refuses(...call(overrides), `invalid argument 2: ${why}`)
    }
    // the same for eth_estimateGas, and debug_traceCall's stateOverrides (its third argument)
    refuses('eth_estimateGas', [{ to: addr }, 'latest', { '0x12': {} }], /^invalid argument 2: /)
    refuses(
      'debug_traceCall',
      [{ to: addr }, 'latest', { stateOverrides: mapOf(1001, addressAt, () => ({})) }],
      'invalid argument 2: too many accounts in the state override, the limit is 1000',
    )
  })

  it('block overrides: each field in form, 1024 withdrawals, 256 block hashes', () => {
    const call = (overrides: unknown): [string, unknown[]] => [
      'eth_call',
      [{ to: addr }, 'latest', null, overrides],
    ]
    accepts(
      ...call({ number: '0x10', time: '0x5', feeRecipient: addr, prevRandao: word, baseFeePerGas: '0x0' }),
    )
    const withdrawal = { index: '0x0', validatorIndex: '0x1', address: addr, amount: '0x2' }
    accepts(...call({ withdrawals: times(1024, () => withdrawal) }))
    refuses(
      ...call({ withdrawals: times(1025, () => withdrawal) }),
      'invalid argument 3: too many withdrawals in the block override, the limit is 1024',
    )
    accepts(...call({ blockHash: mapOf(256, String, () => word) }))
    refuses(
      ...call({ blockHash: mapOf(257, String, () => word) }),
      'invalid argument 3: too many block hashes in the block override, the limit is 256',
    )
    for (const [overrides, name] of [
      [{ time: `0x1${'0'.repeat(16)}` }, 'time'],
      [{ feeRecipient: '0x1' }, 'feeRecipient'],
      [{ prevRandao: '0x1' }, 'prevRandao'],
      [{ withdrawals: [{ ...withdrawal, address: '0x1' }] }, 'withdrawals'],
      [{ blockHash: { 1: '0x1' } }, 'blockHash'],
    ] as const) {
      refuses(...call(overrides), `invalid argument 3: invalid field ${name}`)
    }
    refuses(
      'debug_traceCall',
      [{ to: addr }, 'latest', { blockOverrides: { time: '0x01' } }],
      'invalid argument 2: invalid field blockOverrides',
    )
  })

  it('debug_trace* options: built-in tracers by name only (no JavaScript), a bounded tracerConfig', () => {
    const trace = (options: unknown): [string, unknown[]] => ['debug_traceTransaction', [txHash, options]]
    for (const tracer of ['callTracer', 'prestateTracer', '4byteTracer', 'flatCallTracer', 'muxTracer']) {
      accepts(...trace({ tracer }))
    }
    accepts(
      ...trace({ tracer: 'callTracer', tracerConfig: { onlyTopCall: true, withLog: true }, timeout: '10s' }),
    )
    accepts(...trace({ enableMemory: true, disableStack: false, reexec: 128, limit: 0 }))
    const why = "expected tracer to be one of the node's built-in tracers by name, such as callTracer"
    const code =
      '{data: [], fault: function(log) {}, step: function(log) {}, result: function() { return this.data }}'
    refuses(...trace({ tracer: code }), `invalid argument 1: ${why}`)
    refuses(...trace({ tracer: 'CallTracer' }), `invalid argument 1: ${why}`)
    accepts(
      ...trace({
        tracer: 'muxTracer',
        tracerConfig: { callTracer: { onlyTopCall: true }, '4byteTracer': null },
      }),
    )
    refuses(...trace({ tracer: 'muxTracer', tracerConfig: { [code]: {} } }), `invalid argument 1: ${why}`)
    refuses(
      ...trace({ tracer: 'muxTracer', tracerConfig: { muxTracer: { [code]: {} } } }),
      `invalid argument 1: ${why}`,
    )
    accepts(...trace({ tracer: 'callTracer', tracerConfig: mapOf(1024, String, () => true) }))
    refuses(
      ...trace({ tracer: 'callTracer', tracerConfig: mapOf(1025, String, () => true) }),
      'invalid argument 1: too many values in tracerConfig, the limit is 1024',
    )
    refuses(
      ...trace({ tracer: 'callTracer', tracerConfig: { a: [times(1024, () => 1)] } }),
      'invalid argument 1: too many values in tracerConfig, the limit is 1024',
    )
    accepts(...trace({ tracer: 'callTracer', tracerConfig: { a: { b: { c: 1 } } } }))
    refuses(
      ...trace({ tracer: 'callTracer', tracerConfig: { a: { b: { c: {} } } } }),
      'invalid argument 1: tracerConfig nested too deep, the limit is 3 levels',
    )
    refuses(
      ...trace({ tracer: 'callTracer', tracerConfig: 'x' }),
      'invalid argument 1: expected an object, got a string',
    )
    refuses(...trace({ timeout: 'forever' }), 'invalid argument 1: invalid field timeout')
    // timeout: at most 60 s however written; reexec: at most 128 blocks
    for (const timeout of ['60s', '1m', '59.999999999s', '60000ms', '0.0166h', '0'])
      accepts(...trace({ timeout }))
    for (const timeout of ['60.000000001s', '1m1ns', '61s', '1000000h', '2m']) {
      refuses(...trace({ timeout }), 'invalid argument 1: timeout too large, the limit is 60s')
    }
    accepts(...trace({ reexec: 128 }))
    refuses(...trace({ reexec: 129 }), 'invalid argument 1: reexec too large, the limit is 128 blocks')
    refuses(
      ...trace({ reexec: 2 ** 53 - 1 }),
      'invalid argument 1: reexec too large, the limit is 128 blocks',
    )
    refuses(...trace({ REEXEC: 129 }), 'invalid argument 1: reexec too large, the limit is 128 blocks')
    refuses(
      'debug_traceCall',
      [{ to: addr }, 'latest', { tracer: 'callTracer', Timeout: '61s' }],
      'invalid argument 2: timeout too large, the limit is 60s',
    )
    refuses(...trace({ reexec: '0x80' }), 'invalid argument 1: invalid field reexec')
    for (const method of ['debug_traceBlockByNumber', 'debug_traceBlockByHash']) {
      const block = method === 'debug_traceBlockByHash' ? txHash : 'latest'
      accepts(method, [block, { tracer: 'callTracer' }])
      refuses(method, [block, { tracer: code }], `invalid argument 1: ${why}`)
    }
    refuses('debug_traceCall', [{ to: addr }, 'latest', { tracer: code }], `invalid argument 2: ${why}`)
  })

  it('trace_*: the three trace types, 1024 trace address indices, trace_filter bounded', () => {
    accepts('trace_call', [{ to: addr }, ['trace', 'vmTrace', 'stateDiff'], 'latest'])
    refuses(
      'trace_call',
      [{ to: addr }, ['trace', 'vmTrace', 'stateDiff', 'trace'], 'latest'],
      'invalid argument 1: too many trace types, the limit is 3',
    )
    refuses(
      'trace_replayTransaction',
      [txHash, ['traces']],
      'invalid argument 1: expected trace types among trace, vmTrace and stateDiff',
    )
    accepts('trace_replayBlockTransactions', ['latest', ['trace']])
    accepts('trace_get', [txHash, times(1024, () => '0x0')])
    refuses(
      'trace_get',
      [txHash, times(1025, () => '0x0')],
      'invalid argument 1: too many trace address indices, the limit is 1024',
    )
    const filter = { fromBlock: '0x1', toBlock: 'latest' }
    accepts('trace_filter', [
      { ...filter, fromAddress: times(1000, addressAt), toAddress: [addr], count: 10_000, after: 5 },
    ])
    for (const name of ['fromAddress', 'toAddress']) {
      refuses(
        'trace_filter',
        [{ ...filter, [name]: times(1001, addressAt) }],
        `invalid argument 0: too many addresses in ${name}, the limit is 1000`,
      )
    }
    refuses(
      'trace_filter',
      [{ ...filter, count: 10_001 }],
      'invalid argument 0: count too large, the limit is 10000',
    )
    refuses('trace_filter', [{ ...filter, count: '0x10' }], 'invalid argument 0: invalid field count')
    refuses('trace_filter', [{ fromBlock: 'soon' }], 'invalid argument 0: invalid field fromBlock')
    // a missing fromBlock is the first block to nodes: sent on as such, for the block-range limit to count
    assert.deepEqual(parse('trace_filter', [{ toAddress: [addr] }]), [
      { toAddress: [addr], fromBlock: '0x0' },
    ])
  })

  it('eth_getProof: 1024 storage keys', () => {
    accepts('eth_getProof', [addr, times(1024, wordAt), 'latest'])
    refuses(
      'eth_getProof',
      [addr, times(1025, wordAt), 'latest'],
      'invalid argument 1: too many storage keys, the limit is 1024',
    )
  })

  it("eth_sendRawTransactionSync: a timeout of 60000 ms, as geth's longest wait", () => {
    accepts('eth_sendRawTransactionSync', ['0x02', 60_000])
    accepts('eth_sendRawTransactionSync', ['0x02', '0xea60'])
    refuses(
      'eth_sendRawTransactionSync',
      ['0x02', 60_001],
      'invalid argument 1: timeout too large, the limit is 60000 ms',
    )
  })

  it('every limit is a number the docs table states', async () => {
    const { readFile } = await import('node:fs/promises')
    const docs = await readFile(new URL('../../docs/compatibility.md', import.meta.url), 'utf8')
    for (const [name, limit] of Object.entries(paramLimits)) {
      assert.match(docs, new RegExp(`\\| ${limit.toLocaleString('en-US')}[ |]`), name)
    }
  })
})
