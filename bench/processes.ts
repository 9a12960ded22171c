import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'

/** Child processes the bench started; killed when it ends. */
export const children: ChildProcess[] = []

/** Starts `node args...` and resolves with the first capture of `ready` in its stdout. */
export function spawnAndWait(args: string[], ready: RegExp): Promise<{ child: ChildProcess; match: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
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

/** Runs the tollgate CLI and returns its stdout. */
export function tollgateCli(args: string[]): string {
  return execFileSync(process.execPath, ['bin/tollgate.js', ...args], { encoding: 'utf8' })
}

/** A key no limit will stop, for load. */
export function createUnlimitedKey(configFile: string): string {
  const args = [
    'keys',
    'create',
    '--plan',
    'custom',
    '--daily-credits',
    '1000000000000',
    '--credits-per-second',
    '1000000000',
  ]
  return (JSON.parse(tollgateCli([...args, '--json', '--config', configFile])) as { key: string }).key
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
