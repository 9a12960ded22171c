import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { bin, exited, type GatewayProcess, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { freePort } from './helpers/localProcesses.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

/** `tollgate start` that is expected to fail: its exit code and everything it printed. */
function failedStart(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, 'start', ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr })
    })
  })
}

describe('a second tollgate start touches nothing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-start-'))
  const database = join(dir, 'data', 'tollgate.db')
  let node: TestNode
  let port: number
  let configFile: string
  let first: GatewayProcess

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    port = await freePort()
    configFile = join(dir, 'tollgate.yaml')
    writeFileSync(
      configFile,
      stringify({
        server: { host: '127.0.0.1', port },
        storage: { sqlite: database },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] }],
        gas: { enabled: false },
      }),
    )
    first = await startGatewayProcess(['start', '--config', configFile])
  })
  after(async () => {
    first?.child.kill('SIGKILL')
    await node?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  async function assertFirstServes() {
    const answer = await postJson(`${first.url}/v3/${'0'.repeat(32)}`, rpcBody('eth_chainId'))
    assert.equal(answer.status, 401, 'the first gateway still answers')
  }

  it('the port is taken: one plain line, exit code 1', async () => {
    const second = await failedStart(['--config', configFile])
    assert.equal(second.code, 1)
    assert.equal(second.stderr, `port ${port} is in use\n`)
    assert.equal(second.stdout, '')
    await assertFirstServes()
  })

  it('the database is in use: one plain line naming it, exit code 1', async () => {
    const second = await failedStart(['--config', configFile, '--port', '0'])
    assert.equal(second.code, 1)
    assert.equal(second.stderr, `another tollgate (pid ${first.child.pid}) is using ${database}\n`)
    assert.equal(second.stdout, '')
    await assertFirstServes()
  })

  it('a gateway that died without cleaning up does not keep the database locked', async () => {
    first.child.kill('SIGKILL')
    await exited(first.child)
    first = await startGatewayProcess(['start', '--config', configFile])
    await assertFirstServes()
  })
})
