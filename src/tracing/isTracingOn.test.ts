import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isTracingOn } from './isTracingOn.ts'

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
})
