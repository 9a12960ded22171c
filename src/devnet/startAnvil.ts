import type { Buffer } from 'node:buffer'
import { type ChildProcess, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import process from 'node:process'

export type Anvil = {
  url: string
  wsUrl: string
  port: number
  chainId: number
  process: ChildProcess
  stop(): Promise<void>
}

export type StartAnvilOptions = {
  port?: number
  chainId?: number
  /** Seconds between blocks; 0 (the default) mines a block per transaction. */
  blockTimeSeconds?: number
  extraArgs?: string[]
  readyTimeoutMs?: number
}

const platformPackages: Record<string, string> = {
  'linux-x64': '@foundry-rs/anvil-linux-amd64',
  'linux-arm64': '@foundry-rs/anvil-linux-arm64',
  'darwin-x64': '@foundry-rs/anvil-darwin-amd64',
  'darwin-arm64': '@foundry-rs/anvil-darwin-arm64',
  'win32-x64': '@foundry-rs/anvil-win32-amd64',
}

/** The embedded devnet's node is an optional peer: a production install leaves it out. */
const anvilPackage = '@foundry-rs/anvil'

/**
 * The anvil binary shipped in @foundry-rs/anvil's platform package, resolved from where
 * @foundry-rs/anvil is installed (beside tollgate, or under it); a plain message when it is not.
 */
function resolveAnvilBinary(): string {
  const platform = `${process.platform}-${process.arch}`
  const name = platformPackages[platform]
  if (!name) throw new Error(`no anvil build for ${platform}`)
  let anvil: string
  try {
    anvil = createRequire(import.meta.url).resolve(`${anvilPackage}/package.json`)
  } catch {
    throw new Error(
      `the embedded devnet needs anvil, which this install left out: npm install ${anvilPackage} (beside tollgate; -g for a global install), or start with a config that names your nodes (--config FILE)`,
    )
  }
  let packageJson: string
  try {
    packageJson = createRequire(anvil).resolve(`${name}/package.json`)
  } catch {
    // npm skips optional dependencies under --omit=optional, and on a platform they do not name
    throw new Error(
      `${anvilPackage} is installed without its binary for ${platform} (${name}): install it again`,
    )
  }
  return join(dirname(packageJson), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil')
}

/**
 * Spawns anvil on a loopback port (a free one, that anvil picks, unless `options.port`) and resolves
 * once it answers JSON-RPC. The port is read from what anvil prints when it listens: a port found
 * free beforehand could be taken meanwhile by another process's anvil, which this one would then
 * have answered for it (seen with tests run side by side).
 */
export async function startAnvil(options: StartAnvilOptions = {}): Promise<Anvil> {
  const chainId = options.chainId ?? 31337
  const args = ['--host', '127.0.0.1', '--port', String(options.port ?? 0), '--chain-id', String(chainId)]
  if (options.blockTimeSeconds) args.push('--block-time', String(options.blockTimeSeconds))
  args.push(...(options.extraArgs ?? []))
  // its own process group, so a terminal's Ctrl-C reaches only the gateway, which drains and then stops it
  const child = spawn(resolveAnvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000)
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const readyTimeoutMs = options.readyTimeoutMs ?? 15_000
  let port: number
  try {
    port = await listeningPort(child, exited, readyTimeoutMs)
  } catch (err) {
    child.kill('SIGKILL')
    throw new Error(`anvil did not start: ${err instanceof Error ? err.message : err} ${stderr.trim()}`)
  }
  const url = `http://127.0.0.1:${port}`

  const deadline = Date.now() + readyTimeoutMs
  for (;;) {
    if (child.exitCode !== null) throw new Error(`anvil exited with code ${child.exitCode}: ${stderr.trim()}`)
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        // its answer says anvil is ready, and from then on it prints no line per call
        body: '{"jsonrpc":"2.0","id":1,"method":"anvil_setLoggingEnabled","params":[false]}',
      })
      if (response.ok) break
    } catch {
      // not answering yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`anvil did not answer on port ${port} in time: ${stderr.trim()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 25))
  }

  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}`,
    port,
    chainId,
    process: child,
    async stop() {
      process.off('exit', killOnExit)
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000)
      await exited
      clearTimeout(timer)
    },
  }
}

/**
 * The port anvil says it listens on (`Listening on 127.0.0.1:PORT`, after its banner). What it prints
 * after (a line per call until startAnvil turns them off) is read and dropped: it never waits on a
 * full pipe.
 */
function listeningPort(
  child: ChildProcess,
  exited: Promise<number | null>,
  timeoutMs: number,
): Promise<number> {
  const stdout = child.stdout as NonNullable<ChildProcess['stdout']>
  return new Promise((resolve, reject) => {
    let printed = ''
    const timer = setTimeout(() => finish(new Error(`no "Listening on" line in ${timeoutMs} ms`)), timeoutMs)
    const onData = (chunk: Buffer) => {
      printed = (printed + chunk.toString()).slice(-4096)
      const port = /Listening on [^\s]+:(\d+)/.exec(printed)?.[1]
      if (port) finish(Number(port))
    }
    const finish = (result: number | Error) => {
      clearTimeout(timer)
      stdout.off('data', onData)
      stdout.resume()
      if (typeof result === 'number') resolve(result)
      else reject(result)
    }
    stdout.on('data', onData)
    exited.then((code) => finish(new Error(`anvil exited with code ${code}`)))
  })
}
