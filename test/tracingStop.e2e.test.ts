import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { stringify } from 'yaml'
import { bin, exited, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { freePort } from './helpers/localProcesses.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const run = promisify(execFile)

/** A collector that is down or wrong must not fail a stop: the spans are dropped with a warning. */
describe('tollgate start with tracing: SIGTERM exits 0 whatever the collector does', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-tracestop-'))
  let node: TestNode
  let wrong: Server
  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    // answers every export 404, as a collector's URL with the wrong path does
    wrong = createServer((req, res) => {
      req.resume()
      req.on('end', () => res.writeHead(404).end())
    })
    await new Promise<void>((resolve) => wrong.listen(0, '127.0.0.1', resolve))
  })
  after(async () => {
    await new Promise((resolve) => wrong?.close(resolve))
    await node?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  async function stopWithCollectorAt(name: string, endpoint: string): Promise<void> {
    const port = await freePort()
    const configFile = join(dir, `${name}.yaml`)
    writeFileSync(
      configFile,
      stringify({
        server: { host: '127.0.0.1', port },
        storage: { sqlite: join(dir, `${name}.db`) },
        networks: [{ name: 'one', chainId: 31337, upstreams: [{ url: node.url, name: 'node' }] }],
        tracing: { enabled: true, endpoint, protocol: 'http/json' },
      }),
    )
    const created = await run(process.execPath, [bin, 'keys', 'create', '--json', '--config', configFile])
    const key = (JSON.parse(created.stdout) as { key: string }).key
    const gateway = await startGatewayProcess(['start', '--config', configFile])
    try {
      // spans queued, so the stop has something to export
      const answer = await postJson(`http://127.0.0.1:${port}/one/v3/${key}`, rpcBody('eth_chainId', []))
      assert.equal(answer.status, 200)
      const exit = exited(gateway.child)
      gateway.child.kill('SIGTERM')
      assert.equal(await exit, 0, gateway.output())
      assert.match(gateway.output(), /traces not exported at stop/)
      // the start said where spans go
      assert.ok(
        gateway.output().includes(`"endpoint":"${endpoint}/v1/traces","protocol":"http/json"`),
        gateway.output(),
      )
      assert.doesNotMatch(gateway.output(), /shutdown failed/)
    } finally {
      gateway.child.kill('SIGKILL')
    }
  }

  it('a collector nothing listens on', async () => {
    await stopWithCollectorAt('down', `http://127.0.0.1:${await freePort()}`)
  })

  it('a collector answering 404', async () => {
    const { port } = wrong.address() as AddressInfo
    await stopWithCollectorAt('wrong', `http://127.0.0.1:${port}`)
  })
})
