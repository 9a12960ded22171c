import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { toGethFieldName } from './gethFieldName.ts'
import { getMethodSpec } from './methodTable.ts'
import { parseParams } from './params.ts'

describe('toGethFieldName', () => {
  it('reads ASCII letters in any case as one', () => {
    for (const name of ['stateDiff', 'STATEDIFF', 'statediff', 'StAtEdIfF']) {
      assert.equal(toGethFieldName(name), 'statediff')
    }
    assert.equal(toGethFieldName('4byteTracer_1'), '4bytetracer_1')
  })

  it("folds what Go's encoding/json folds to ASCII: ſ to s, the Kelvin sign to k, İ and ı to i", () => {
    assert.equal(toGethFieldName('\u017ftate'), 'state')
    assert.equal(toGethFieldName('bloc\u212aHash'), 'blockhash')
    assert.equal(toGethFieldName('T\u0130MEOUT'), 'timeout')
    assert.equal(toGethFieldName('t\u0131meout'), 'timeout')
  })

  it('folds nothing else to ASCII: ß and the ligatures that upper-case to several letters stay', () => {
    for (const name of ['addre\u00df', '\ufb06ate', 'o\ufb00set', '\ufb01eld']) {
      assert.match(toGethFieldName(name), /[\u0080-\uffff]/, name)
    }
    assert.equal(toGethFieldName('Stra\u00dfe'), 'stra\u00dfe')
  })
})

const addr = `0x${'cd'.repeat(20)}`
const word = `0x${'ab'.repeat(32)}`
const txHash = `0x${'12'.repeat(32)}`
const kelvin = '\u212a'
const code = '{result: function() { return 1 }, fault: function() {}}'
const why = "expected tracer to be one of the node's built-in tracers by name, such as callTracer"

const parse = (method: string, params: unknown[]) => parseParams(getMethodSpec(method).params, params)
const times = <T>(count: number, make: (at: number) => T): T[] =>
  Array.from({ length: count }, (_, at) => make(at))
const addressAt = (at: number) => `0x${at.toString(16).padStart(40, '0')}`
const mapOf = (count: number, key: (at: number) => string, value: unknown) =>
  Object.fromEntries(times(count, (at) => [key(at), value]))

/** A bounded field: its exact name, other names geth reads as it, the call around one, the refusal. */
type Case = [method: string, names: string[], params: (name: string) => unknown[], refusal: string]

const overrides = (account: object) => [{ to: addr }, 'latest', { [addr]: account }]
const blockOverride = (override: object) => [{ to: addr }, 'latest', null, override]
const simulate = (payload: object) => [payload]
const block = (fields: object) => simulate({ blockStateCalls: [fields] })

const cases: Case[] = [
  ['debug_traceTransaction', ['tracer', 'Tracer', 'TRACER'], (n) => [txHash, { [n]: code }], `1: ${why}`],
  ['debug_traceCall', ['tracer', 'Tracer'], (n) => [{ to: addr }, 'latest', { [n]: code }], `2: ${why}`],
  [
    'debug_traceTransaction',
    ['tracerConfig', 'TracerConfig', 'tracerCONFIG'],
    (n) => [txHash, { tracer: 'callTracer', [n]: mapOf(1025, String, true) }],
    '1: too many values in tracerConfig, the limit is 1024',
  ],
  [
    'debug_traceTransaction',
    ['tracer', 'Tracer'],
    (n) => [txHash, { [n]: 'muxTracer', tracerConfig: { [code]: {} } }],
    `1: ${why}`,
  ],
  [
    'debug_traceTransaction',
    ['timeout', 'TIMEOUT', 'T\u0130MEOUT'],
    (n) => [txHash, { [n]: 'soon' }],
    '1: invalid field timeout',
  ],
  [
    'debug_traceCall',
    ['stateOverrides', 'StateOverrides', '\u017ftateOverrides'],
    (n) => [{ to: addr }, 'latest', { [n]: mapOf(1001, addressAt, {}) }],
    '2: too many accounts in the state override, the limit is 1000',
  ],
  [
    'debug_traceCall',
    ['blockOverrides', 'BlockOverrides', `bloc${kelvin}Overrides`],
    (n) => [{ to: addr }, 'latest', { [n]: { time: '0x01' } }],
    '2: invalid field blockOverrides',
  ],
  [
    'debug_traceCall',
    ['txIndex', 'TXINDEX'],
    (n) => [{ to: addr }, 'latest', { [n]: '0x01' }],
    '2: invalid field txIndex',
  ],
  [
    'eth_call',
    ['code', 'CODE', 'Code'],
    (n) => overrides({ [n]: `0x${'60'.repeat(98_305)}` }),
    '2: code too large, the limit is 98304 bytes',
  ],
  [
    'eth_call',
    ['state', 'STATE', '\u017ftate'],
    (n) => overrides({ [n]: mapOf(10_001, (at) => `0x${at.toString(16).padStart(64, '0')}`, word) }),
    "2: too many storage slots in one account's state, the limit is 10000",
  ],
  [
    'eth_call',
    ['stateDiff', 'stateDIFF', '\u017fTATEDIFF'],
    (n) => overrides({ [n]: mapOf(10_001, (at) => `0x${at.toString(16).padStart(64, '0')}`, word) }),
    "2: too many storage slots in one account's stateDiff, the limit is 10000",
  ],
  [
    'eth_call',
    ['balance', 'Balance'],
    (n) => overrides({ [n]: `0x1${'0'.repeat(64)}` }),
    '2: invalid field balance',
  ],
  ['eth_call', ['nonce', 'NONCE'], (n) => overrides({ [n]: '0x01' }), '2: invalid field nonce'],
  [
    'eth_call',
    ['movePrecompileToAddress', 'MovePrecompileToAddress'],
    (n) => overrides({ [n]: '0x1' }),
    '2: invalid field movePrecompileToAddress',
  ],
  [
    'eth_call',
    ['stateDiff', 'STATEDIFF'],
    (n) => overrides({ state: {}, [n]: {} }),
    `2: account ${addr} has both state and stateDiff`,
  ],
  ['eth_call', ['time', 'TIME'], (n) => blockOverride({ [n]: '0x01' }), '3: invalid field time'],
  [
    'eth_call',
    ['withdrawals', 'Withdrawals'],
    (n) => blockOverride({ [n]: times(1025, () => ({})) }),
    '3: too many withdrawals in the block override, the limit is 1024',
  ],
  [
    'eth_call',
    ['address', 'Address'],
    (n) => blockOverride({ withdrawals: [{ [n]: '0x1' }] }),
    '3: invalid field withdrawals',
  ],
  [
    'eth_call',
    ['blockHash', 'BLOCKHASH', `bloc${kelvin}Hash`],
    (n) => blockOverride({ [n]: mapOf(257, String, word) }),
    '3: too many block hashes in the block override, the limit is 256',
  ],
  ['eth_call', ['to', 'TO', 'To'], (n) => [{ [n]: '0x12' }], '0: invalid field to'],
  ['eth_call', ['data', 'Data'], (n) => [{ to: addr, [n]: '0x1' }], '0: invalid field data'],
  [
    'eth_simulateV1',
    ['blockStateCalls', 'BlockStateCalls'],
    (n) => simulate({ [n]: times(257, () => ({})) }),
    '0: too many blocks in blockStateCalls, the limit is 256',
  ],
  [
    'eth_simulateV1',
    ['calls', 'CALLS'],
    (n) => block({ [n]: times(5001, () => ({ to: addr })) }),
    '0: too many calls in one block, the limit is 5000',
  ],
  [
    'eth_simulateV1',
    ['stateOverrides', 'STATEOVERRIDES'],
    (n) => block({ [n]: { [addr]: { code: '0x1' } } }),
    '0: invalid field code',
  ],
  [
    'eth_simulateV1',
    ['blockOverrides', 'BLOCKOVERRIDES'],
    (n) => block({ [n]: { time: '0x01' } }),
    '0: invalid field time',
  ],
  [
    'eth_simulateV1',
    ['validation', 'VALIDATION', 'val\u0131dation'],
    (n) => simulate({ blockStateCalls: [], [n]: 'yes' }),
    '0: invalid field validation',
  ],
  [
    'eth_getLogs',
    ['address', 'ADDRESS', 'addre\u017f\u017f'],
    (n) => [{ [n]: times(1001, addressAt) }],
    '0: too many addresses, the limit is 1000',
  ],
  [
    'eth_newFilter',
    ['topics', 'Topics'],
    (n) => [{ [n]: [null, null, null, null, null] }],
    '0: too many topic positions, the limit is 4',
  ],
  [
    'trace_filter',
    ['fromAddress', 'FROMADDRESS', 'fromAddre\u017fs'],
    (n) => [{ [n]: times(1001, addressAt) }],
    '0: too many addresses in fromAddress, the limit is 1000',
  ],
  [
    'trace_filter',
    ['toAddress', 'ToAddress'],
    (n) => [{ [n]: times(1001, addressAt) }],
    '0: too many addresses in toAddress, the limit is 1000',
  ],
  ['trace_filter', ['count', 'COUNT'], (n) => [{ [n]: 10_001 }], '0: count too large, the limit is 10000'],
  ['trace_filter', ['after', 'After'], (n) => [{ [n]: '0x10' }], '0: invalid field after'],
  ['trace_filter', ['toBlock', 'TOBLOCK'], (n) => [{ [n]: 'soon' }], '0: invalid field toBlock'],
]

describe("each method's params read field names as geth does", () => {
  it('a bounded field under any name geth reads as it is refused as under its exact name', () => {
    for (const [method, names, params, refusal] of cases) {
      for (const name of names) {
        assert.throws(
          () => parse(method, params(name)),
          { code: -32602, message: `invalid argument ${refusal}` },
          `${method} ${name}`,
        )
      }
    }
  })

  it('two names geth reads as one field: both are checked, whichever geth would take', () => {
    const refusedBoth = [
      ['debug_traceTransaction', [txHash, { tracer: 'callTracer', Tracer: code }]],
      ['debug_traceTransaction', [txHash, { Tracer: code, tracer: 'callTracer' }]],
      ['eth_call', overrides({ code: '0x', CODE: `0x${'60'.repeat(98_305)}` })],
      ['eth_getLogs', [{ address: [addr], ADDRESS: times(1001, addressAt) }]],
      ['eth_simulateV1', simulate({ blockStateCalls: [], BLOCKSTATECALLS: times(257, () => ({})) })],
      ['eth_simulateV1', simulate({ BLOCKSTATECALLS: [], blockStateCalls: {} })],
    ] as const
    for (const [method, params] of refusedBoth) {
      assert.throws(() => parse(method, [...params]), { code: -32602 }, JSON.stringify(params).slice(0, 80))
    }
  })

  it('a name that folds to no field geth reads passes through, as geth ignores it', () => {
    const huge = `0x${'60'.repeat(98_305)}`
    for (const [method, params] of [
      ['debug_traceTransaction', [txHash, { tracers: code, 'tracer ': code }]],
      ['eth_call', overrides({ codes: huge, 'co\u00dfe': huge })],
      ['eth_call', overrides({ '\ufb06ate': mapOf(10_001, String, 1) })],
      ['eth_getLogs', [{ 'addre\u00df': times(1001, addressAt) }]],
      ['eth_simulateV1', simulate({ blockStateCalls: [], blockStateCall: times(257, () => 1) })],
      ['trace_filter', [{ fromBlock: '0x1', counts: 10_001 }]],
    ] as const) {
      assert.doesNotThrow(() => parse(method, [...params]), method)
    }
  })

  it('log and trace filters send their blocks on under their exact names, as geth reads them', () => {
    const written = { fromBlock: '0x1', toBlock: '0x2', address: addr }
    assert.equal((parse('eth_getLogs', [written]) as unknown[])[0], written, 'written exactly: as sent')
    assert.deepEqual(parse('eth_getLogs', [{ FromBlock: '0x5', address: addr, TOBLOCK: 'latest' }]), [
      { address: addr, fromBlock: '0x5', toBlock: 'latest' },
    ])
    // geth reads the last of them
    assert.deepEqual(parse('eth_getLogs', [{ fromBlock: '0x1', FROMBLOCK: 'earliest' }]), [
      { fromBlock: 'earliest' },
    ])
    assert.deepEqual(parse('eth_getLogs', [{ FromBlock: '0x1', fromBlock: null }]), [{ fromBlock: null }])
    assert.throws(() => parse('eth_getLogs', [{ blockHash: word, FromBlock: '0x1' }]), {
      message: 'invalid argument 0: cannot specify both blockHash and fromBlock/toBlock',
    })
    assert.throws(() => parse('eth_getLogs', [{ FROMBLOCK: 'soon' }]), {
      message: 'invalid argument 0: invalid field fromBlock',
    })
    assert.deepEqual(parse('trace_filter', [{ FromBlock: '0x5', toBlock: '0x6' }]), [
      { fromBlock: '0x5', toBlock: '0x6' },
    ])
    assert.deepEqual(parse('trace_filter', [{ FromBlock: null }]), [{ fromBlock: '0x0' }])
  })
})
