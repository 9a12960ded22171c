import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { type Anvil, startAnvil } from '../src/devnet/startAnvil.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { until } from './helpers/until.ts'

// A devnet restarted under a running gateway (anvil stopped, another started on its port: a new
// genesis under the same chain id) is what the log says it is: a new chain, not a reorg or a rewind.

type LogLine = { level: number; msg: string }

const newChain = /^a new chain under the same chain id \(its genesis block changed: a restarted devnet/
const forkLines = /a reorg or a rewind|blocks at or below the finalized one changed/

async function startChain(timestamp: number, port?: number): Promise<Anvil> {
  const anvil = await startAnvil({ ...(port ? { port } : {}), extraArgs: ['--timestamp', String(timestamp)] })
  await postJson(anvil.url, rpcBody('anvil_mine', ['0x5']))
  return anvil
}

describe('a devnet restarted under the gateway', () => {
  const lines: LogLine[] = []
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
  let anvil: Anvil
  let gateway: TestGateway

  before(async () => {
    anvil = await startChain(1_700_000_000)
    gateway = await startTestGateway({ upstreams: [anvil.url], log })
    const network = gateway.app.networks.all[0]
    await until(() => network?.heads.genesis() !== undefined, "the gateway to know the chain's genesis")
  })
  after(async () => {
    await gateway?.close()
    await anvil?.stop()
  })

  it('is logged as a new chain, never as a reorg or a rewind', async () => {
    const { port } = anvil
    await anvil.stop()
    anvil = await startChain(1_700_000_500, port)
    const genesis = (
      (await postJson(anvil.url, rpcBody('eth_getBlockByNumber', ['0x0', false]))).json as {
        result: { hash: string }
      }
    ).result.hash
    const network = gateway.app.networks.all[0]
    await until(() => network?.heads.genesis() === genesis, 'the gateway to meet the new chain')
    await until(() => lines.some((line) => newChain.test(line.msg)), 'the new chain logged')
    // the new chain's blocks served through the gateway: whatever the fork would log is logged by now
    await until(async () => {
      const answer = await postJson(gateway.endpoint, rpcBody('eth_getBlockByNumber', ['0x0', false]))
      return (answer.json as { result?: { hash: string } }).result?.hash === genesis
    }, "the gateway to answer the new chain's genesis")
    const logged = lines.map((line) => line.msg)
    assert.deepEqual(logged.filter((msg) => newChain.test(msg)).length, 1, logged.join('\n'))
    assert.deepEqual(
      logged.filter((msg) => forkLines.test(msg)),
      [],
    )
  })
})
