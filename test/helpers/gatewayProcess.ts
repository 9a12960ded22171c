import { type ChildProcess, spawn } from 'node:child_process'
import { resolve } from 'node:path'

export const bin = resolve('bin/tollgate.js')

export type GatewayProcess = { child: ChildProcess; url: string; output(): string }

/**
 * Runs `tollgate ARGS` as its own process (as a user would) and waits until its output matches
 * `ready` (by default the "listening on" line). TOLLGATE_CONFIG is cleared unless `env` sets it.
 */
export async function startGatewayProcess(
  args: string[],
  options: { cwd?: string; ready?: RegExp; timeoutMs?: number } = {},
): Promise<GatewayProcess> {
  const env = { ...process.env }
  delete env.TOLLGATE_CONFIG
  const child = spawn(process.execPath, [bin, ...args], {
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
  const deadline = Date.now() + (options.timeoutMs ?? 60_000)
  while (!ready.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`the gateway did not start: ${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return { child, url: /listening on (\S+)/.exec(output)?.[1] ?? '', output: () => output }
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode)
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)))
}
