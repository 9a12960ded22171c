import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { stringify } from 'yaml'
import { bin, exited, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { freePort } from './helpers/localProcesses.ts'
import { openSocket } from './helpers/openSocket.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { type HoldingUpstream, startHoldingUpstream } from './helpers/startHoldingUpstream.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const run = promisify(execFile)

/** `tollgate start` as its own process, stopped while calls are under way (docs/operations.md "Shutdown"). */
describe('tollgate start: SIGTERM drains HTTP and WebSocket calls', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-drain-'))
  let node: TestNode
  let slow: HoldingUpstream
  after(async () => {
    slow?.release()
    await slow?.close()
    await node?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('a call in flight is answered (HTTP and WebSocket), a new WebSocket message is refused, then 1001 with a reconnect hint, exit code 0', async () => {
    node = await startTestNode({ loadBlocks: 1 })
    slow = await startHoldingUpstream(node.url, 'eth_getBalance')
    const port = await freePort()
    const configFile = join(dir, 'tollgate.yaml')
    writeFileSync(
      configFile,
      stringify({
        server: { host: '127.0.0.1', port },
        storage: { sqlite: join(dir, 'tollgate.db') },
        networks: [{ name: 'one', chainId: 31337, upstreams: [{ url: slow.url, name: 'slow' }] }],
      }),
    )
    const created = await run(process.execPath, [
      bin,
      'keys',
      'create',
      '--plan',
      'core',
      '--json',
      '--config',
      configFile,
    ])
    const key = (JSON.parse(created.stdout) as { key: string }).key
    const gateway = await startGatewayProcess(['start', '--config', configFile])
    try {
      const ws = await openSocket(`ws://127.0.0.1:${port}/one/ws/v3/${key}`)
      ws.socket.send(JSON.stringify(rpcBody('eth_subscribe', ['newHeads'], 1)))
      await until(() => ws.messages.some((message) => message.id === 1), 'subscribed')
      const http = postJson(
        `http://127.0.0.1:${port}/one/v3/${key}`,
        rpcBody('eth_getBalance', ['0x0000000000000000000000000000000000000002', 'latest']),
      )
      ws.socket.send(
        JSON.stringify(
          rpcBody('eth_getBalance', ['0x0000000000000000000000000000000000000003', 'latest'], 2),
        ),
      )
      await until(() => slow.holding() === 2, 'both held calls')
      const exit = exited(gateway.child)
      gateway.child.kill('SIGTERM')
      // the listener closes and the sockets are told in one step: a refused connection shows both
      await until(
        () =>
          openSocket(`ws://127.0.0.1:${port}/one/ws/v3/${key}`).then(
            (late) => {
              late.socket.close()
              return false
            },
            () => true,
          ),
        'the drain begun',
      )
      ws.socket.send(JSON.stringify(rpcBody('eth_chainId', [], 3)))
      await until(() => ws.messages.some((message) => message.id === 3), 'the late message answered')
      assert.equal(
        ws.messages.find((message) => message.id === 3)?.error?.message,
        'server restarting, reconnect',
      )
      slow.release()
      const answer = await http
      assert.equal(answer.status, 200, answer.text)
      assert.deepEqual(await ws.closed, { code: 1001, reason: 'server restarting, reconnect' })
      assert.equal(
        ws.messages.find((message) => message.id === 2)?.result,
        '0x0',
        'answered before the close',
      )
      assert.equal(await exit, 0)
    } finally {
      if (gateway.child.exitCode === null) gateway.child.kill('SIGKILL')
    }
  })
})
