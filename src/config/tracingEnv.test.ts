import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isTracingOn, tracingEnvProblems } from './tracingEnv.ts'

describe('isTracingOn', () => {
  it('is off by default, on with an OTLP endpoint, and as tracing.enabled says when set', () => {
    assert.equal(isTracingOn({}, {}), false)
    assert.equal(isTracingOn({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true)
    assert.equal(isTracingOn({}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }), true)
    assert.equal(isTracingOn({ endpoint: 'http://collector:4318' }, {}), true)
    assert.equal(isTracingOn({ enabled: true }, {}), true)
    assert.equal(isTracingOn({ enabled: false }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), false)
  })

  it('OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none turn it off whatever is set', () => {
    assert.equal(isTracingOn({ enabled: true }, { OTEL_SDK_DISABLED: 'true' }), false)
    assert.equal(isTracingOn({ enabled: true }, { OTEL_TRACES_EXPORTER: 'none' }), false)
  })

  it('names a grpc protocol or an unknown sampler, only when tracing is on and no key stands for it', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }
    assert.deepEqual(tracingEnvProblems({}, on), [])
    const grpc = tracingEnvProblems({}, { ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })
    assert.equal(grpc.length, 1)
    assert.match(grpc[0] ?? '', /^OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not offered/)
    assert.equal(tracingEnvProblems({}, { ...on, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }).length, 1)
    const sampler = tracingEnvProblems({}, { ...on, OTEL_TRACES_SAMPLER: 'jaeger_remote' })
    assert.equal(sampler.length, 1)
    assert.match(sampler[0] ?? '', /^OTEL_TRACES_SAMPLER: jaeger_remote is not one tollgate offers/)
    // a key that is set wins over its variable
    assert.deepEqual(
      tracingEnvProblems(
        { protocol: 'http/json', sampleRatio: 0.5 },
        { ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_TRACES_SAMPLER: 'jaeger_remote' },
      ),
      [],
    )
    // off: a cluster's defaults do not matter
    assert.deepEqual(tracingEnvProblems({}, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), [])
  })
})
