import { type ChildProcess, spawn } from 'node:child_process'
import { resolve } from 'node:path'

export const bin = resolve('bin/tollgate.js')

export type GatewayProcess = { child: ChildProcess; url: string; output(): string }

/**
 * Runs `tollgate ARGS` as its own process (as a user would) and waits until its output matches
 * `ready` (by default the "listening on" line): it looks at each chunk the child writes, and fails
 * when the child exits first or after `timeoutMs`. TOLLGATE_CONFIG is cleared unless `env` (added to
 * this process's environment) sets it; `nodeFlags` go to node, before the command; `bin` runs another
 * copy of tollgate (an installed release) than this checkout's.
 */
export async function startGatewayProcess(
  args: string[],
  options: {
    cwd?: string
    ready?: RegExp
    timeoutMs?: number
    env?: Record<string, string>
    nodeFlags?: string[]
    bin?: string
  } = {},
): Promise<GatewayProcess> {
  const env = { ...process.env }
  delete env.TOLLGATE_CONFIG
  Object.assign(env, options.env)
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), options.bin ?? bin, ...args], {
    cwd: options.cwd ?? process.cwd(),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  const ready = options.ready ?? /listening on \S+/
  const timeoutMs = options.timeoutMs ?? 60_000
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => fail(`the gateway was not ready within ${timeoutMs} ms`), timeoutMs)
      function stop(): void {
        clearTimeout(timer)
        child.stdout?.off('data', look)
        child.stderr?.off('data', look)
        child.off('close', ended)
        child.off('error', failed)
      }
      function fail(why: string): void {
        stop()
        reject(new Error(`${why}: ${output}`))
      }
      // registered after the listeners above: `output` holds each chunk by the time it is looked at
      function look(): void {
        if (!ready.test(output)) return
        stop()
        resolve()
      }
      // 'close' (not 'exit'): by then every byte the child wrote has been seen
      function ended(): void {
        fail('the gateway exited before it was ready')
      }
      function failed(err: Error): void {
        fail(`the gateway did not start (${err.message})`)
      }
      child.stdout?.on('data', look)
      child.stderr?.on('data', look)
      child.once('close', ended)
      child.once('error', failed)
    })
  } catch (err) {
    child.kill('SIGKILL')
    throw err
  }
  return { child, url: /listening on (\S+)/.exec(output)?.[1] ?? '', output: () => output }
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode)
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)))
}
