import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseMetrics } from './readMetrics.ts'

const text = `# HELP tollgate_upstream_up 1 while an upstream is in use.
# TYPE tollgate_upstream_up gauge
tollgate_upstream_up{network="devnet",upstream="a",role="primary"} 1
tollgate_upstream_up{network="devnet",upstream="b",role="partner"} 0
tollgate_upstream_up{network="other",upstream="a",role="primary"} 1

# TYPE tollgate_odd_labels gauge
tollgate_odd_labels{path="a \\"quoted\\" {brace}, comma",slash="C:\\\\dir\\\\",line="one\\ntwo",} 2.5
tollgate_odd_labels{path="} 9",slash="",line=""} -3e2
# TYPE tollgate_build_info gauge
tollgate_build_info 1 1700000000000
# TYPE tollgate_upstream_error_rate gauge
tollgate_upstream_error_rate{network="devnet"} Nan
tollgate_upstream_latency_ms{network="devnet"} +Inf
`

describe('parseMetrics', () => {
  const metrics = parseMetrics(text)

  it('reads every sample, skipping HELP, TYPE and blank lines', () => {
    assert.deepEqual(
      metrics.samples.map((sample) => sample.name),
      [
        'tollgate_upstream_up',
        'tollgate_upstream_up',
        'tollgate_upstream_up',
        'tollgate_odd_labels',
        'tollgate_odd_labels',
        'tollgate_build_info',
        'tollgate_upstream_error_rate',
        'tollgate_upstream_latency_ms',
      ],
    )
    assert.deepEqual(metrics.samples[0], {
      name: 'tollgate_upstream_up',
      labels: { network: 'devnet', upstream: 'a', role: 'primary' },
      value: 1,
    })
  })

  it('unescapes label values holding quotes, backslashes, newlines, commas and braces', () => {
    assert.deepEqual(metrics.all('tollgate_odd_labels')[0], {
      name: 'tollgate_odd_labels',
      labels: { path: 'a "quoted" {brace}, comma', slash: 'C:\\dir\\', line: 'one\ntwo' },
      value: 2.5,
    })
    assert.equal(metrics.value('tollgate_odd_labels', { path: '} 9' }), -300)
    assert.equal(metrics.value('tollgate_odd_labels', { path: 'a "quoted" {brace}, comma' }), 2.5)
  })

  it('reads values without labels, with a timestamp, NaN and infinities', () => {
    assert.equal(metrics.value('tollgate_build_info'), 1)
    assert.ok(Number.isNaN(metrics.value('tollgate_upstream_error_rate')))
    assert.equal(metrics.value('tollgate_upstream_latency_ms', { network: 'devnet' }), Infinity)
  })

  it('finds samples of one name by the labels they include; sums them', () => {
    assert.equal(metrics.all('tollgate_upstream_up', { network: 'devnet' }).length, 2)
    assert.equal(metrics.value('tollgate_upstream_up', { network: 'devnet', upstream: 'b' }), 0)
    assert.equal(metrics.sum('tollgate_upstream_up'), 2)
    assert.equal(metrics.sum('tollgate_upstream_up', { upstream: 'a' }), 2)
    assert.equal(metrics.sum('tollgate_upstream_up', { network: 'devnet' }), 1)
  })

  it('says undefined (value), 0 (sum), nothing (all) of an absent name or labels', () => {
    assert.equal(metrics.value('tollgate_nothing'), undefined)
    assert.equal(metrics.value('tollgate_upstream_up', { network: 'nowhere' }), undefined)
    // a prefix of a name is not the name
    assert.equal(metrics.value('tollgate_upstream'), undefined)
    assert.equal(metrics.sum('tollgate_nothing'), 0)
    assert.deepEqual(metrics.all('tollgate_upstream_up', { network: 'devnet', role: 'other' }), [])
  })

  it('refuses to pick one of several samples', () => {
    assert.throws(() => metrics.value('tollgate_upstream_up', { network: 'devnet' }), /2 samples/)
  })

  it('refuses a line that is no sample', () => {
    for (const line of [
      'tollgate_x{network="devnet"',
      'tollgate_x{network="devnet} 1',
      'tollgate_x{network=devnet} 1',
      'tollgate_x{a="1"b="2"} 1',
      'tollgate_x',
      'tollgate_x one',
      '{a="1"} 1',
    ])
      assert.throws(() => parseMetrics(line), /not a (Prometheus )?sample/, line)
  })
})
