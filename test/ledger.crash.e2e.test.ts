import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { stringify } from 'yaml'
import { bin, exited, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const run = promisify(execFile)
const flushMs = 200
const limit = 1_000_000

/**
 * The ledger across process deaths: a graceful stop loses nothing; a SIGKILL loses at most the
 * usage of the last flush interval (metering.flushMs), which docs/operations.md states.
 */
describe('ledger across restarts and crashes', () => {
  let node: TestNode
  let dir: string
  let configFile: string

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    dir = mkdtempSync(join(tmpdir(), 'tollgate-ledger-'))
    configFile = join(dir, 'tollgate.yaml')
    writeFileSync(
      configFile,
      stringify({
        server: { port: 0 },
        storage: { sqlite: join(dir, 'tollgate.db') },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
        metering: { flushMs },
        log: { level: 'warn' },
      }),
    )
  })
  after(async () => {
    await node?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  async function newKey(): Promise<string> {
    const args = ['keys', 'create', '--plan', 'custom', '--daily-credits', String(limit)]
    const { stdout } = await run(process.execPath, [
      bin,
      ...args,
      '--credits-per-second',
      '1000000',
      '--json',
      '--config',
      configFile,
    ])
    return (JSON.parse(stdout) as { key: string }).key
  }

  async function usedCredits(key: string): Promise<number> {
    const { stdout } = await run(process.execPath, [
      bin,
      'usage',
      '--key',
      key,
      '--json',
      '--config',
      configFile,
    ])
    return (JSON.parse(stdout) as { credits: number }[]).reduce((sum, row) => sum + row.credits, 0)
  }

  async function calls(url: string, key: string, count: number): Promise<void> {
    for (let id = 0; id < count; id++) {
      const response = await postJson(`${url}/v3/${key}`, rpcBody('eth_blockNumber', [], id))
      assert.equal(response.status, 200)
    }
  }

  it('a graceful stop (SIGTERM) writes every credit', async () => {
    const key = await newKey()
    const gateway = await startGatewayProcess(['start', '--config', configFile])
    await calls(gateway.url, key, 25)
    gateway.child.kill('SIGTERM')
    assert.equal(await exited(gateway.child), 0)
    assert.equal(await usedCredits(key), 25 * 80)

    const again = await startGatewayProcess(['start', '--config', configFile])
    const response = await postJson(`${again.url}/v3/${key}`, rpcBody('eth_chainId'))
    assert.equal(response.headers.get('x-credits-remaining'), String(limit - 25 * 80 - 5))
    again.child.kill('SIGTERM')
    await exited(again.child)
  })

  it('a SIGKILL loses at most the calls served since the last flush', async () => {
    const key = await newKey()
    const gateway = await startGatewayProcess(['start', '--config', configFile])
    await calls(gateway.url, key, 20)
    // a flush (every flushMs) writes the 20 calls: seen in the store, not assumed after a sleep
    await until(
      async () => (await usedCredits(key)) === 20 * 80,
      'a flush to store the first 20 calls',
      30_000,
    )
    await calls(gateway.url, key, 10)
    gateway.child.kill('SIGKILL')
    await exited(gateway.child)

    // whatever flushes ran during the last 10 calls, the loss is counted against them, not timed
    const used = await usedCredits(key)
    assert.equal(used % 80, 0, `usage is whole calls: ${used}`)
    assert.ok(used >= 20 * 80, `what was flushed survives the kill: ${used}`)
    assert.ok(used <= 30 * 80, `never more than was served: ${used}`)
    const lost = (30 * 80 - used) / 80
    assert.ok(lost <= 10, `lost ${lost} calls: at most the 10 served after the last flush seen`)

    const again = await startGatewayProcess(['start', '--config', configFile])
    const response = await postJson(`${again.url}/v3/${key}`, rpcBody('eth_chainId'))
    assert.equal(
      response.headers.get('x-credits-remaining'),
      String(limit - used - 5),
      'the balance is what was stored',
    )
    again.child.kill('SIGTERM')
    await exited(again.child)
  })
})
