import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/** The lowest port of the kernel's ephemeral range (Linux's default 32768 when it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    return Number.isInteger(low) && low > 0 ? low : 32_768
  } catch {
    return 32_768
  }
}

/** Where freePort picks from: below the ephemeral range. */
const pickedFrom = 10_000

/**
 * A TCP port free on 127.0.0.1 just now (for a gateway started with a fixed port in its config),
 * picked at random below the kernel's ephemeral range: the kernel gives ports of that range to every
 * outgoing connection (the tests make thousands) and to every server on port 0, and one of them
 * could take a port of it between this check and the gateway's bind (seen in CI: both workers of a
 * gateway 'the port is in use'). Below it, only another test's pick can, one chance in thousands.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralLow()
  for (let tries = 0; below > pickedFrom && tries < 100; tries++) {
    const port = pickedFrom + Math.floor(Math.random() * (below - pickedFrom))
    if (await isFree(port)) return port
  }
  // no room below the range (or none free there): one the kernel picks
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

/** Whether a server could listen on `port` of 127.0.0.1 just now. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer()
    probe.once('error', () => resolve(false))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
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
