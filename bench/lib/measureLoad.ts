// What the benchmarks that compare processes under the same load share: one measurement of a target
// with autocannon (throughput and the target's CPU per call), and the sum of several turns.
import autocannon from 'autocannon'
import { cpuTicks } from './processes.ts'

export type LoadTarget = { name: string; url: string; pid: number | undefined }
export type Measurement = { rps: number; cpuMicros: number; requests: number }

/** `connections` clients posting `body` to the target for `duration` seconds; any failed request throws. */
export async function measure(
  target: LoadTarget,
  body: string,
  connections: number,
  duration: number,
): Promise<Measurement> {
  const before = cpuTicks(target.pid) ?? 0
  const result = await autocannon({
    url: target.url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    duration,
  })
  const after = cpuTicks(target.pid) ?? 0
  if (result.errors + result.timeouts + result.non2xx > 0) throw new Error(`${target.name}: failed requests`)
  const requests = result.requests.total
  return {
    rps: result.requests.average,
    cpuMicros: ((after - before) * 10_000) / Math.max(1, requests),
    requests,
  }
}

/** Turns of one measurement as one: mean throughput, CPU per call weighted by calls. */
export function combine(measurements: Measurement[]): Measurement {
  const requests = measurements.reduce((sum, each) => sum + each.requests, 0)
  return {
    rps: measurements.reduce((sum, each) => sum + each.rps, 0) / measurements.length,
    cpuMicros: Math.round(
      measurements.reduce((sum, each) => sum + each.cpuMicros * each.requests, 0) / requests,
    ),
    requests,
  }
}

export function fmt(value: number): string {
  return Math.round(value).toLocaleString('en-US')
}
