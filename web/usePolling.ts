import { useEffect, useState } from 'preact/hooks'
import { messageOf } from './api.ts'

export type Loaded<T> = { data: T | undefined; error: string | undefined; reload: () => void }

/** Loads `load()` now and every `everyMs` (0: once) while the page shows; `deps` start it again. */
export function usePolling<T>(load: () => Promise<T>, everyMs: number, deps: unknown[] = []): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [generation, setGeneration] = useState(0)

  useEffect(() => {
    let stopped = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const tick = async () => {
      try {
        const next = await load()
        if (stopped) return
        setData(next)
        setError(undefined)
      } catch (err) {
        if (!stopped) setError(messageOf(err))
      }
      if (!stopped && everyMs > 0) timer = setTimeout(tick, everyMs)
    }
    void tick()
    return () => {
      stopped = true
      clearTimeout(timer)
    }
  }, [generation, ...deps])

  return { data, error, reload: () => setGeneration((value) => value + 1) }
}
