// Preloaded by bench/profile.ts into each process it measures (NODE_OPTIONS=--import=...): SIGUSR2
// starts V8's sampling profiler, a second SIGUSR2 stops it and writes the profile to
// $PROFILE_OUT. Plain JavaScript, so that the measured process loads no TypeScript loader for it.
import { renameSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector'

const out = process.env.PROFILE_OUT
const intervalMicros = Number(process.env.PROFILE_INTERVAL_MICROS ?? 200)
const session = new Session()
session.connect()
let running = false

process.on('SIGUSR2', () => {
  if (!running) {
    running = true
    session.post('Profiler.enable', () =>
      session.post('Profiler.setSamplingInterval', { interval: intervalMicros }, () =>
        session.post('Profiler.start'),
      ),
    )
    return
  }
  running = false
  session.post('Profiler.stop', (error, result) => {
    if (error || !out) throw error ?? new Error('PROFILE_OUT is not set')
    // written whole, then renamed: whoever watches for the file never reads half of it
    writeFileSync(`${out}.partial`, JSON.stringify(result.profile))
    renameSync(`${out}.partial`, out)
  })
})
