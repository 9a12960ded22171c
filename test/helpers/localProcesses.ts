import { execFileSync } from 'node:child_process'
import { createServer } from 'node:net'

/** A TCP port free on 127.0.0.1 just now (for a gateway started with a fixed port in its config). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

/** The processes whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number)
      .filter((each) => each > 0)
  } catch {
    return []
  }
}
