import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { after, before, describe, it } from 'node:test'
import { type Address, encodeAbiParameters, keccak256 } from 'viem'
import { utcDay } from '../src/metering/clock.ts'
import { getMethodSpec } from '../src/methods/methodTable.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { devnetOver, startTestNode, type TestNode } from './helpers/startTestNode.ts'

/**
 * The cast binary from @foundry-rs/cast's platform package. Not node_modules/.bin/cast: that npm
 * wrapper exits 0 whatever cast exits with, so a failing command would look like a passing one.
 */
function resolveCast(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch
  const require = createRequire(import.meta.url)
  // the platform packages are @foundry-rs/cast's optional dependencies: resolved from where it is
  const fromCast = createRequire(require.resolve('@foundry-rs/cast/package.json'))
  const exe = process.platform === 'win32' ? '.exe' : ''
  return fromCast.resolve(`@foundry-rs/cast-${process.platform}-${arch}/bin/cast${exe}`)
}

type CastRun = { code: number; stdout: string; stderr: string }

const castBinary = resolveCast()
/** Far above what a command takes (well under a second): a hung or reconnecting cast fails the test. */
const castTimeoutMs = 10_000

/**
 * Runs `cast <args> --rpc-url <rpcUrl>`. Whatever the command, cast must finish in time and must not
 * complain of binary frames or reconnect (what it did when the gateway sent binary frames).
 */
function cast(args: string[], rpcUrl: string): Promise<CastRun> {
  return new Promise((resolve, reject) => {
    execFile(
      castBinary,
      [...args, '--rpc-url', rpcUrl],
      { timeout: castTimeoutMs, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        if (err?.killed) {
          reject(
            new Error(`cast ${args[0]} did not finish in ${castTimeoutMs} ms:\n${stderr.slice(0, 2_000)}`),
          )
          return
        }
        if (err && typeof err.code !== 'number') {
          reject(err)
          return
        }
        try {
          assert.doesNotMatch(stderr, /binary message|reconnect/i)
        } catch (failure) {
          reject(failure)
          return
        }
        resolve({ code: (err?.code as number | undefined) ?? 0, stdout, stderr: withoutExitNoise(stderr) })
      },
    )
  })
}

/**
 * cast's WebSocket client sometimes logs that its backend failed as cast itself exits, against the
 * node as against the gateway (seen once in CI, on the node's side): a line about cast's shutdown,
 * not about the command, so it is left out of what the two runs must agree on.
 */
function withoutExitNoise(stderr: string): string {
  return stderr.replace(/^\S+ ERROR alloy_pubsub::service: Pubsub service backend error\.\n/gm, '')
}

describe('foundry cast through the gateway', () => {
  let node: TestNode
  let gateway: TestGateway
  let blockNumber: string
  const wsUrl = (key = gateway.key) => `${gateway.url.replace('http', 'ws')}/ws/v3/${key}`

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    gateway = await startTestGateway({ config: { networks: devnetOver(node) } })
    blockNumber = (await cast(['block-number'], node.url)).stdout.trim()
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  for (const transport of ['HTTP', 'WebSocket'] as const) {
    describe(`--rpc-url ${transport === 'HTTP' ? 'http://…/v3/KEY' : 'ws://…/ws/v3/KEY'}`, () => {
      const urls = () =>
        transport === 'HTTP'
          ? { gateway: gateway.endpoint, node: node.url }
          : { gateway: wsUrl(), node: node.wsUrl }

      /** Runs the command against the gateway and against the node: the same exit code, output and errors. */
      async function same(args: string[]): Promise<CastRun> {
        const viaGateway = await cast(args, urls().gateway)
        assert.deepEqual(viaGateway, await cast(args, urls().node), `cast ${args.join(' ')}`)
        return viaGateway
      }
      const sameJson = async (args: string[]) => {
        const run = await same([...args, '--json'])
        assert.equal(run.code, 0, run.stderr)
        return JSON.parse(run.stdout)
      }

      it('cast block: by number and by hash, with and without transactions', async () => {
        const receipt = await sameJson(['receipt', node.fixtures.eip1559Tx])
        const block = await sameJson(['block', String(Number(receipt.blockNumber))])
        assert.equal(block.hash, receipt.blockHash)
        assert.deepEqual(block.transactions, [node.fixtures.eip1559Tx])
        const full = await sameJson(['block', receipt.blockHash, '--full'])
        assert.equal(full.transactions[0].hash, node.fixtures.eip1559Tx)
        assert.deepEqual(await sameJson(['block', receipt.blockHash]), block)
        await sameJson(['block', 'latest'])
      })

      it('cast receipt: every kind of transaction', async () => {
        const { deployTx, legacyTx, accessListTx, eip1559Tx, failedTx } = node.fixtures
        for (const hash of [deployTx, legacyTx, accessListTx, eip1559Tx]) {
          assert.equal((await sameJson(['receipt', hash])).status, '0x1')
        }
        assert.equal((await sameJson(['receipt', failedTx])).status, '0x0')
      })

      it('cast call: a result, a revert with a reason string and one with a custom error', async () => {
        const { demo, accounts, counterValue } = node.fixtures
        const counter = await same(['call', demo, 'counter()(uint256)', '--block', blockNumber])
        assert.equal(counter.stdout.trim(), String(counterValue))

        const reason = await same(['call', demo, 'failWithReason()'])
        assert.equal(reason.code, 1)
        assert.match(reason.stderr, /execution reverted: Demo: not allowed/)
        const custom = await same(['call', demo, 'failWithCustomError()', '--from', accounts[1] as Address])
        assert.equal(custom.code, 1)
        // NotAllowed(address,uint256)
        assert.match(custom.stderr, /execution reverted: custom error 0x8626cc03/)
      })

      it('cast storage, cast proof, cast access-list and cast nonce', async () => {
        const { demo, mappingKey, mappingValue, counterValue, accounts } = node.fixtures
        const mappingSlot = keccak256(
          encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [mappingKey, 1n]),
        )
        const stored = await same(['storage', demo, mappingSlot, '--block', blockNumber])
        assert.equal(BigInt(stored.stdout.trim()), mappingValue)
        assert.equal(
          BigInt((await same(['storage', demo, '0', '--block', blockNumber])).stdout.trim()),
          counterValue,
        )

        const proof = await same(['proof', demo, '0', mappingSlot, '--block', blockNumber])
        assert.equal(BigInt(JSON.parse(proof.stdout).storageProof[1].value), mappingValue)

        const accessList = await sameJson([
          'access-list',
          demo,
          'increment()',
          '--from',
          accounts[2] as Address,
          '--block',
          blockNumber,
        ])
        assert.ok(accessList.accessList[0].storageKeys.includes(`0x${'0'.repeat(64)}`))

        // the deployer sent the deploy, setBalance and the failed transaction
        const nonce = await same(['nonce', accounts[0] as Address, '--block', blockNumber])
        assert.equal(nonce.stdout.trim(), '3')
      })

      it('cast logs: by address and by event signature', async () => {
        const { demo } = node.fixtures
        const range = ['--from-block', '0', '--to-block', blockNumber]
        const byAddress = await sameJson(['logs', ...range, '--address', demo])
        // two increments, the deposit and setBalance
        assert.equal(byAddress.length, 4)
        const incremented = await sameJson(['logs', ...range, 'Incremented(address,uint256)'])
        assert.equal(incremented.length, 2)
      })
    })
  }

  it('one cast nonce over ws is charged for the call it makes, not for thousands', async () => {
    const { app } = gateway
    const { key } = await app.keyAdmin.create({
      plan: 'custom',
      dailyCredits: 1_000_000,
      creditsPerSecond: 1_000_000,
    })
    await app.keys.refresh()
    const subject = app.keys.findActiveKey(key.key)?.subject
    assert.ok(subject)
    const balanceBefore = app.meter.remainingCredits(subject)
    const today = utcDay(Date.now())

    // accounts[1] sent the legacy and the EIP-1559 transaction
    const run = await cast(['nonce', node.fixtures.accounts[1] as Address], wsUrl(key.key))
    assert.equal(run.stdout.trim(), '2')

    await app.meter.flush()
    const usage = await app.usageStore.queryUsage({ keyId: key.id, fromDay: today })
    const calls = Object.fromEntries(usage.map((row) => [row.method, row.calls]))
    assert.equal(calls.eth_getTransactionCount, 1)
    assert.ok(usage.reduce((sum, row) => sum + row.calls, 0) <= 3, `calls made: ${JSON.stringify(calls)}`)
    const charged = balanceBefore - app.meter.remainingCredits(subject)
    assert.equal(
      charged,
      usage.reduce((sum, row) => sum + row.calls * getMethodSpec(row.method).costCredits, 0),
    )
  })
})
