import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { context, ROOT_CONTEXT, SpanKind, TraceFlags, trace } from '@opentelemetry/api'
import { SamplingDecision } from '@opentelemetry/sdk-trace'
import { samplerOf } from './startTracing.ts'

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'

/** A context whose parent span is the caller's (remote) or our own (local), sampled or not. */
function parent(isRemote: boolean, sampled: boolean) {
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId: '00f067aa0ba902b7',
    traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote,
  })
}

function decision(sampler: ReturnType<typeof samplerOf>, at: ReturnType<typeof parent>): SamplingDecision {
  return sampler.shouldSample(at, traceId, 'span', SpanKind.SERVER, {}, []).decision
}

describe('samplerOf', () => {
  it("does not follow a caller's sampled flag: our ratio decides (0 keeps none, 1 keeps all)", () => {
    const none = samplerOf({ sampleRatio: 0 }, {})
    assert.equal(decision(none, parent(true, true)), SamplingDecision.NOT_RECORD)
    const all = samplerOf({ sampleRatio: 1 }, {})
    assert.equal(decision(all, parent(true, false)), SamplingDecision.RECORD_AND_SAMPLED)
    // the default (parentbased_always_on) and an explicit parent-based sampler likewise
    const off = samplerOf({}, { OTEL_TRACES_SAMPLER: 'parentbased_always_off' })
    assert.equal(decision(off, parent(true, true)), SamplingDecision.NOT_RECORD)
    assert.equal(decision(samplerOf({}, {}), parent(true, false)), SamplingDecision.RECORD_AND_SAMPLED)
  })

  it('follows a parent inside our own trace', () => {
    const none = samplerOf({ sampleRatio: 0 }, {})
    assert.equal(decision(none, parent(false, true)), SamplingDecision.RECORD_AND_SAMPLED)
    assert.equal(decision(none, context.active()), SamplingDecision.NOT_RECORD)
  })

  it("with trustCallerSampling, the caller's flag decides", () => {
    const trusting = samplerOf({ sampleRatio: 0, trustCallerSampling: true }, {})
    assert.equal(decision(trusting, parent(true, true)), SamplingDecision.RECORD_AND_SAMPLED)
    const trustingAll = samplerOf({ sampleRatio: 1, trustCallerSampling: true }, {})
    assert.equal(decision(trustingAll, parent(true, false)), SamplingDecision.NOT_RECORD)
  })

  it('refuses a sampler tollgate does not offer', () => {
    assert.throws(() => samplerOf({}, { OTEL_TRACES_SAMPLER: 'jaeger_remote' }), /jaeger_remote/)
  })
})
