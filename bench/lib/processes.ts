import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'

/** Child processes the bench started; killed when it ends. */
export const children: ChildProcess[] = []

/** SIGTERM to every child, resolved once all have exited (what they write on the way out is written). */
export async function stopChildren(): Promise<void> {
  await Promise.all(children.map((child) => stopChild(child.pid)))
}

/** SIGTERM to the child `pid` (one of `children`), resolved once it has exited. */
export async function stopChild(pid: number | undefined): Promise<void> {
  const child = children.find((each) => each.pid === pid)
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

/**
 * Starts `node args...` (behind `wrapper`, a command such as valgrind, if given; a wrapper that ends
 * with node itself and its flags is the whole command before `args`) and resolves with the first
 * capture of `ready` in its stdout.
 */
function spawnAndWait(
  args: string[],
  ready: RegExp,
  wrapper: string[] = [],
): Promise<{ child: ChildProcess; match: string }> {
  const withNode = wrapper.includes(process.execPath) ? wrapper : [...wrapper, process.execPath]
  const [command = process.execPath, ...wrapperArgs] = withNode
  const child = spawn(command, [...wrapperArgs, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  children.push(child)
  return new Promise((resolve, reject) => {
    let output = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const match = ready.exec(output)
      if (match?.[1]) {
        child.stdout?.removeAllListeners('data')
        child.stdout?.resume()
        resolve({ child, match: match[1] })
      }
    })
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${output}`)))
  })
}

/**
 * The minimal pass-through (bench/lib/passThroughProxy.ts) in front of `upstreamUrl`, serving `key`
 * (behind `wrapper`, if given): the URL to call it at, and its pid.
 */
export async function startPassThrough(
  upstreamUrl: string,
  key: string,
  wrapper: string[] = [],
  answers: 'plain' | 'headers' = 'plain',
): Promise<{ url: string; pid: number | undefined }> {
  const { child, match } = await spawnAndWait(
    ['--import', 'tsx', 'bench/lib/passThroughProxy.ts', upstreamUrl, '0', key, answers],
    /listening (\d+)/,
    wrapper,
  )
  return { url: `http://127.0.0.1:${match}/v3/${key}`, pid: child.pid }
}

/**
 * The counting proxy (bench/lib/countingProxy.ts) in front of `upstreamUrl`: the URL to send calls to
 * (GET it for the counts), and its pid.
 */
export async function startCountingProxy(
  upstreamUrl: string,
): Promise<{ url: string; pid: number | undefined }> {
  const { child, match } = await spawnAndWait(
    ['--import', 'tsx', 'bench/lib/countingProxy.ts', upstreamUrl, '0'],
    /listening (\d+)/,
  )
  return { url: `http://127.0.0.1:${match}/`, pid: child.pid }
}

/**
 * Runs the tollgate CLI (this checkout's, or the one at `bin`) and returns its stdout. What it writes
 * to stderr is kept, not shown: a failure throws with it (as the error's message and `stderr`).
 */
function tollgateCli(args: string[], bin = 'bin/tollgate.js'): string {
  return execFileSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

const unlimitedKeyArgs = [
  'keys',
  'create',
  '--plan',
  'custom',
  '--daily-credits',
  '1000000000000',
  '--credits-per-second',
  '1000000000',
]

/** A key no limit will stop, for load. */
export function createUnlimitedKey(configFile: string, bin?: string): string {
  return (
    JSON.parse(tollgateCli([...unlimitedKeyArgs, '--json', '--config', configFile], bin)) as { key: string }
  ).key
}

/** A key no limit will stop that also needs its secret (the CLI makes both, and the database's hash key). */
export function createUnlimitedKeyWithSecret(configFile: string): { key: string; secret: string } {
  const created = tollgateCli([...unlimitedKeyArgs, '--secret', '--json', '--config', configFile])
  return JSON.parse(created) as { key: string; secret: string }
}

/** utime + stime of a process, in clock ticks (1/100 s). */
export function cpuTicks(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return undefined
  }
}

/** Resident memory of a process, in MiB. */
export function rssMiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}

/** Writes a config for one network `devnet` on `upstream` (plus `config` over it) into `dir`: its path. */
export function writeTollgateConfig(
  dir: string,
  name: string,
  upstream: { url: string; ws?: string },
  config: Record<string, unknown> = {},
): string {
  const configFile = join(dir, `${name}.yaml`)
  writeFileSync(
    configFile,
    stringify({
      server: { port: 0 },
      storage: { sqlite: join(dir, `${name}.db`) },
      networks: [{ name: 'devnet', chainId: 31337, upstreams: [upstream] }],
      log: { level: 'warn' },
      ...config,
    }),
  )
  return configFile
}

/** Starts `tollgate start --config configFile` on a free port: its origin and pid. */
export async function startTollgateProcess(
  configFile: string,
  bin = 'bin/tollgate.js',
  wrapper: string[] = [],
): Promise<{ origin: string; pid: number | undefined }> {
  const started = await spawnAndWait([bin, 'start', '--config', configFile], /listening on (\S+)/, wrapper)
  return { origin: started.match, pid: started.child.pid }
}

/**
 * Writes a config for one network `devnet` on `upstream` (plus `config` over it) into `dir`, creates
 * an unlimited key, and starts `tollgate start` on a free port.
 */
export async function startTollgate(
  dir: string,
  name: string,
  upstream: { url: string; ws?: string },
  config: Record<string, unknown> = {},
  /** The tollgate to run: this checkout's build, or src/main.ts (its sources; another build: startBaseTollgate). */
  bin = 'bin/tollgate.js',
  /** A command to run tollgate behind (spawnAndWait). */
  wrapper: string[] = [],
): Promise<{ key: string; origin: string; url: string; pid: number | undefined }> {
  const configFile = writeTollgateConfig(dir, name, upstream, config)
  const key = createUnlimitedKey(configFile, bin)
  const { origin, pid } = await startTollgateProcess(configFile, bin, wrapper)
  return { key, origin, url: `${origin}/v3/${key}`, pid }
}
