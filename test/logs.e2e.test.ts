import assert from 'node:assert/strict'
import { readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { exportSPKI, generateKeyPair, SignJWT } from 'jose'
import { pino } from 'pino'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway } from './helpers/startTestGateway.ts'
import { startTestNode } from './helpers/startTestNode.ts'

describe('logs', () => {
  it('name keys only by a short hash; no key, secret or JWT appears in a log line or an error message', async () => {
    const node = await startTestNode({ loadBlocks: 1 })
    const failing = await startFakeUpstream({ kind: 'status', status: 500 })
    const logFile = join(tmpdir(), `tollgate-logs-${process.pid}.log`)
    const log = pino({ level: 'trace' }, pino.destination({ dest: logFile, sync: true }))
    const gateway = await startTestGateway({
      log,
      config: {
        networks: [
          { name: 'devnet', chainId: 31337, upstreams: [{ url: node.url }] },
          { name: 'broken', chainId: 1, upstreams: [{ url: `${failing.url}/v3/vendorsecret0123` }] },
        ],
        upstreams: { headPollMs: 100 },
      },
    })
    try {
      const { key, secret } = await gateway.app.keyAdmin.create({ plan: 'team', secret: true })
      const pair = await generateKeyPair('ES256')
      await gateway.app.keyAdmin.addJwtKey(key.key, 'k1', await exportSPKI(pair.publicKey))
      await gateway.app.keys.refresh()
      const jwt = await new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setExpirationTime('10m')
        .sign(pair.privateKey)
      assert.ok(secret)
      const basic = (value: string) => ({
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`:${value}`).toString('base64')}`,
      })
      const answers = [
        await postJson(`${gateway.url}/devnet/v3/${key.key}`, rpcBody('eth_chainId'), basic(secret)),
        await postJson(`${gateway.url}/devnet/v3/${key.key}`, rpcBody('eth_chainId'), basic(`${secret}0`)),
        await postJson(`${gateway.url}/devnet/v3/${key.key}`, rpcBody('eth_chainId'), {
          'content-type': 'application/json',
          authorization: `Bearer ${jwt}`,
        }),
        await postJson(`${gateway.url}/devnet/v3/${key.key}`, rpcBody('eth_chainId'), {
          'content-type': 'application/json',
          authorization: `Bearer ${jwt}x`,
        }),
        await postJson(`${gateway.url}/broken/v3/${key.key}`, rpcBody('eth_blockNumber')),
        await postJson(`${gateway.url}/devnet/v3/${key.key.replace(/.$/, '0')}`, rpcBody('eth_chainId')),
        await postJson(`${gateway.url}/devnet/v3/${key.key}`, '{"broken'),
      ]
      // nothing to wait for: the destination writes synchronously, and the gateway writes each line
      // before it sends the answer; with every answer in, the file holds every line
      const lines = readFileSync(logFile, 'utf8').trim().split('\n')
      assert.ok(
        lines.some((line) => line.includes('"msg":"rpc request"')),
        'requests are logged at debug',
      )
      assert.ok(
        lines.some((line) => line.includes('"level":40')),
        'the upstream failure is logged',
      )
      assert.ok(
        lines.some(
          (line) => line.includes('"network":"broken","status":503') && line.includes('"msg":"rpc request"'),
        ),
        'the failed request is logged too',
      )
      const secrets = [key.key, secret, jwt, 'vendorsecret0123', key.key.slice(0, 16)]
      for (const text of [...lines, ...answers.map((answer) => answer.text)]) {
        for (const value of secrets) assert.ok(!text.includes(value), `leaked in: ${text}`)
      }
    } finally {
      await gateway.close()
      await failing.close()
      await node.stop()
      rmSync(logFile, { force: true })
    }
  })
})
