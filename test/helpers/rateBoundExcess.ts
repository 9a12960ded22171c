/** Credits through a per-second limit at one moment: taken for an admitted request (+), or given back (-). */
export type RateFlow = { atMs: number; credits: number }

/**
 * How far the flows exceed the per-second limit's bound (docs/compatibility.md §2) over their worst
 * window: over any window, the credits taken less those given back are at most `ratePerSecond` times
 * the window plus the larger of one second's worth and the dearest request admitted in it. 0 or less:
 * the bound holds over every window.
 */
export function rateBoundExcess(flows: readonly RateFlow[], ratePerSecond: number): number {
  const sorted = [...flows].sort((a, b) => a.atMs - b.atMs)
  let worst = Number.NEGATIVE_INFINITY
  for (let start = 0; start < sorted.length; start++) {
    const startMs = (sorted[start] as RateFlow).atMs
    let net = 0
    let dearest = 0
    for (let end = start; end < sorted.length; end++) {
      const flow = sorted[end] as RateFlow
      net += flow.credits
      dearest = Math.max(dearest, flow.credits)
      const bound = (ratePerSecond * (flow.atMs - startMs)) / 1000 + Math.max(ratePerSecond, dearest)
      worst = Math.max(worst, net - bound)
    }
  }
  return worst
}
