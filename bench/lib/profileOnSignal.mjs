// Preloaded by bench/profile.ts into each process it measures (NODE_OPTIONS=--import=...): SIGUSR2
// starts one of V8's sampling profilers, a second SIGUSR2 stops it and writes the profile to
// $PROFILE_OUT. PROFILE_KIND picks which: `cpu` (default; a sample every PROFILE_INTERVAL_MICROS)
// or `allocations` (a sample every PROFILE_INTERVAL_BYTES allocated, kept whether or not the
// object was collected since). Plain JavaScript, so that the measured process loads no TypeScript
// loader for it.
import { renameSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector'

const out = process.env.PROFILE_OUT
const allocations = process.env.PROFILE_KIND === 'allocations'
const intervalMicros = Number(process.env.PROFILE_INTERVAL_MICROS ?? 200)
const intervalBytes = Number(process.env.PROFILE_INTERVAL_BYTES ?? 64)
const session = new Session()
session.connect()
let running = false

const throwIfFailed = (error) => {
  if (error) throw error
}

process.on('SIGUSR2', () => {
  if (!running) {
    running = true
    if (allocations) {
      session.post('HeapProfiler.enable', () =>
        session.post(
          'HeapProfiler.startSampling',
          {
            samplingInterval: intervalBytes,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true,
          },
          throwIfFailed,
        ),
      )
    } else {
      session.post('Profiler.enable', () =>
        session.post('Profiler.setSamplingInterval', { interval: intervalMicros }, () =>
          session.post('Profiler.start', throwIfFailed),
        ),
      )
    }
    return
  }
  running = false
  session.post(allocations ? 'HeapProfiler.stopSampling' : 'Profiler.stop', (error, result) => {
    if (error || !out) throw error ?? new Error('PROFILE_OUT is not set')
    // written whole, then renamed: whoever watches for the file never reads half of it
    writeFileSync(`${out}.partial`, JSON.stringify(result.profile))
    renameSync(`${out}.partial`, out)
  })
})
