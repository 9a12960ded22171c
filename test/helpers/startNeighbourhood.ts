import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportSPKI, generateKeyPair } from 'jose'
import { stringify } from 'yaml'
import { type Anvil, startAnvil } from '../../src/devnet/startAnvil.ts'
import { type GatewayProcess, startGatewayProcess } from './gatewayProcess.ts'
import { mib, stopAll } from './hostileClients.ts'
import { measureEndlessGas } from './measureEndlessGas.ts'
import { mineWideBlock, wideBlockGasLimit } from './mineWideBlock.ts'
import { type JsonResponse, postJson, rpcBody } from './postJson.ts'
import { type CountingProxy, startCountingProxy } from './startCountingProxy.ts'
import { type FakeUpstream, startFakeUpstream } from './startFakeUpstream.ts'
import { until } from './until.ts'

/** The developer plan's credits a second (docs/plans.md): the attacker's. */
export const attackerRate = 4_000
/** The attacker's calls at the nodes at once: what a 2-core node runs of the heaviest calls (docs/plans.md). */
export const attackerCallsInFlight = 2
/** Every call's deadline: twice the neighbour's bound, so that a call past the bound is still answered. */
const timeoutMs = 2_000
/** The widest eth_getLogs range the `logs` network's upstream answers (besu's refusal: no width said). */
const limitBlocks = 100n
/** Blocks mined for the eth_getLogs ranges. */
const minedBlocks = 1_600n

// each side from an address of its own, as clients on the internet are (the gateway trusts this
// machine as a proxy): the per-address shares and the failure limiter see them apart
export const attackerHeaders = { 'x-forwarded-for': '203.0.113.7' }
export const neighbourHeaders = { 'x-forwarded-for': '198.51.100.9' }

/** Returns 42 (PUSH1 42, PUSH1 0, MSTORE, PUSH1 32, PUSH1 0, RETURN): the neighbour's contract. */
const answerCode = '0x602a60005260206000f3'
const adminToken = 'neighbour-admin-token-0123456789'

export type Charges = { byMethod: Record<string, number>; total: number }

export type Neighbourhood = {
  gateway: GatewayProcess
  /** Counts what reaches anvil through the `devnet` network. */
  proxy: CountingProxy
  /** The `logs` network's upstream: its requests are what reached it. */
  limiter: FakeUpstream
  /** The developer key that attacks, the team key that is its neighbour. */
  attacker: string
  neighbour: string
  /** Core keys that require their secret, and a JWT: what strangers probe. */
  secretKey: string
  jwtKey: string
  /** The contract whose code returns 42. */
  contract: string
  /**
   * Gas for an endless call: what keeps the node's CPU on it for twice every call's deadline
   * (measureEndlessGas), so that the node is still at work on it when the gateway gives up, on any
   * machine (anvil's CPU time per gas varied by 6% from call to call on a busy machine, and a quarter
   * more than the deadline was once too little: one call ran out of gas first, on a machine 2.5x
   * slower than the one it was measured on), and then not for long (it works on to the end, for nobody).
   */
  endlessGas: bigint
  /** A block filter the neighbour made. */
  neighbourFilter: string
  /** A block whose full answer is 8 MiB and more. */
  wideBlock: string
  head: bigint
  /** Client processes the attacks started: any still running is killed at the end. */
  children: ChildProcess[]
  /** A call on `key` at the network `prefix` names ('' for `devnet`, `/logs`, `/wide`). */
  call(
    prefix: string,
    key: string,
    headers: Record<string, string>,
    body: unknown,
  ): Promise<JsonResponse & { json: { result?: unknown; error?: { code: number; message: string } } }>
  /** The credits `key` was charged so far, by method, every network added up (the admin API's usage). */
  usageOf(key: string): Promise<Map<string, number>>
  /** What `key` was charged since `before` (usageOf's), by method and in all. */
  chargedSince(key: string, before: Map<string, number>): Promise<Charges>
  close(): Promise<void>
}

/**
 * One gateway process in front of one anvil (started with room for wide blocks and long calls),
 * shared by an attacking key and its neighbour. Its networks are the same anvil three ways:
 * `devnet` (the default) behind a proxy counting what reaches the node, which the neighbour shares
 * with the attacker; `logs` behind a limiter that refuses eth_getLogs ranges over 100 blocks as besu
 * does (the fake only for the refusal); `wide` directly, for a block answer of 8 MiB, which would
 * hold the test process's own event loop through a proxy here. Keys are made through the admin API.
 */
export async function startNeighbourhood(): Promise<Neighbourhood> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-neighbour-'))
  const children: ChildProcess[] = []
  let anvil: Anvil | undefined
  let proxy: CountingProxy | undefined
  let limiter: FakeUpstream | undefined
  let gateway: GatewayProcess | undefined
  const close = async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await stopAll([], [gateway], anvil, dir)
    await proxy?.close()
    await limiter?.close()
  }
  try {
    anvil = await startAnvil({ extraArgs: ['--gas-limit', String(wideBlockGasLimit)] })
    proxy = await startCountingProxy(anvil.url)
    limiter = await startFakeUpstream({ kind: 'refuseOr', target: anvil.url, refuse: refuseWideRanges })
    gateway = await startGateway(dir, [proxy.url, limiter.url, anvil.url])
    const filled = await fill(anvil.url, gateway)
    const endlessGas = await measureEndlessGas(anvil, (2 * timeoutMs) / 1000)
    // more would be lowered to that (capGas), and then run out early
    const tenfold = 10n * BigInt(wideBlockGasLimit)
    assert.ok(
      endlessGas <= tenfold,
      `${endlessGas} gas for an endless call: the gateway lets ${tenfold} through`,
    )
    return { ...filled, endlessGas, gateway, proxy, limiter, children, close }
  } catch (err) {
    await close()
    throw err
  }
}

/** An eth_getLogs range over limitBlocks refused as besu refuses it; every other request forwarded. */
function refuseWideRanges(request: { method: string; params: unknown[] }) {
  if (request.method !== 'eth_getLogs') return undefined
  const { fromBlock, toBlock } = request.params[0] as { fromBlock: string; toBlock: string }
  if (BigInt(toBlock) - BigInt(fromBlock) + 1n <= limitBlocks) return undefined
  return { error: { code: -32005, message: 'Requested range exceeds maximum RPC range limit' } }
}

/**
 * What the node at `nodeUrl` and the gateway hold for the attacks: a wide block, the neighbour's
 * contract, blocks for eth_getLogs ranges, the keys (each in use as set) and the neighbour's filter.
 */
async function fill(
  nodeUrl: string,
  gateway: GatewayProcess,
): Promise<Omit<Neighbourhood, 'endlessGas' | 'gateway' | 'proxy' | 'limiter' | 'children' | 'close'>> {
  const nodeCall = async (method: string, params: unknown[]) =>
    ((await postJson(nodeUrl, rpcBody(method, params))).json as { result: unknown }).result
  const wideBlock = await mineWideBlock(nodeUrl, 8 * mib)
  const contract = `0x${'c0de'.repeat(10)}`
  await nodeCall('anvil_setCode', [contract, answerCode])
  await nodeCall('anvil_mine', [`0x${minedBlocks.toString(16)}`])
  const head = BigInt((await nodeCall('eth_blockNumber', [])) as string)

  const admin = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const response = await fetch(`${gateway.url}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`)
    return JSON.parse(text)
  }
  const createKey = async (options: Record<string, unknown>) =>
    (await admin('POST', '/keys', options)) as { key: string; secret: string }
  const call: Neighbourhood['call'] = async (prefix, key, headers, body) => {
    const answer = await postJson(`${gateway.url}${prefix}/v3/${key}`, body, {
      'content-type': 'application/json',
      ...headers,
    })
    return { ...answer, json: answer.json as { result?: unknown; error?: { code: number; message: string } } }
  }
  const usageOf = async (key: string) => {
    const rows = (await admin('GET', `/usage?key=${key}&days=2`)) as { method: string; credits: number }[]
    const byMethod = new Map<string, number>()
    for (const row of rows) byMethod.set(row.method, (byMethod.get(row.method) ?? 0) + row.credits)
    return byMethod
  }

  const attacker = (await createKey({ plan: 'developer', name: 'attacker' })).key
  const neighbour = (await createKey({ plan: 'team', name: 'neighbour' })).key
  const withSecret = await createKey({ plan: 'core', name: 'secret', secret: true })
  await admin('PATCH', `/keys/${withSecret.key}`, { requireSecret: true })
  const withJwt = await createKey({ plan: 'core', name: 'jwt', secret: true })
  const { publicKey } = await generateKeyPair('ES256')
  await admin('POST', `/keys/${withJwt.key}/jwt-keys`, { kid: 'k1', publicKey: await exportSPKI(publicKey) })
  await admin('PATCH', `/keys/${withJwt.key}`, { requireJwt: true })
  // every key in use as set: the secret's key serves its secret, the JWT's tells its secret what is missing
  const basic = (password: string) => ({
    authorization: `Basic ${Buffer.from(`:${password}`).toString('base64')}`,
  })
  const chainId = rpcBody('eth_chainId')
  await until(async () => (await call('', neighbour, {}, chainId)).status === 200, 'the keys')
  await until(async () => (await call('', withSecret.key, basic(withSecret.secret), chainId)).status === 200)
  await until(
    async () =>
      (await call('', withJwt.key, basic(withJwt.secret), chainId)).json.error?.message === 'invalid JWT',
    'the JWT required',
  )
  const filter = await call('', neighbour, neighbourHeaders, rpcBody('eth_newBlockFilter'))

  return {
    attacker,
    neighbour,
    secretKey: withSecret.key,
    jwtKey: withJwt.key,
    contract,
    neighbourFilter: filter.json.result as string,
    wideBlock,
    head,
    call,
    usageOf,
    async chargedSince(key, before) {
      const now = await usageOf(key)
      const byMethod = Object.fromEntries(
        [...now]
          .map(([method, credits]) => [method, credits - (before.get(method) ?? 0)] as const)
          .filter(([, credits]) => credits !== 0),
      )
      const total = Object.values(byMethod).reduce((sum, credits) => sum + credits, 0)
      return { byMethod, total }
    },
  }
}

/** The gateway process, its networks `devnet`, `logs` and `wide` in front of `upstreams` in that order. */
function startGateway(dir: string, upstreams: string[]): Promise<GatewayProcess> {
  const [devnet, logs, wide] = upstreams
  const configFile = join(dir, 'tollgate.yaml')
  writeFileSync(
    configFile,
    stringify({
      server: {
        host: '127.0.0.1',
        port: 0,
        trustedProxies: ['127.0.0.1'],
        // twice the default, as bodyMemory's: the stalled uploads held long enough for a hundred of
        // the neighbour's calls and more on a busy machine, so that its p99 is not its one worst
        bodyStallTimeoutMs: 10_000,
        // room for batches of 320 MiB, so that each is answered whole, as noStall's
        maxAnswerBytes: 400 * mib,
        maxAnswerBytesInFlight: 800 * mib,
      },
      storage: { sqlite: join(dir, 'tollgate.db') },
      networks: [
        { name: 'devnet', chainId: 31337, upstreams: [{ url: devnet }] },
        { name: 'logs', chainId: 31337, upstreams: [{ url: logs }] },
        { name: 'wide', chainId: 31337, upstreams: [{ url: wide }] },
      ],
      upstreams: { timeoutMs },
      // the wide block's answer (8 MiB and a little) kept: the batches of it are then the gateway's
      // own work, however busy anvil is (with the endless calls, or the machine) within timeoutMs
      cache: { maxEntryBytes: 16 * mib },
      plans: { developer: { maxCallsInFlight: attackerCallsInFlight } },
      admin: { token: adminToken },
      gas: { enabled: false },
      log: { level: 'error' },
    }),
  )
  return startGatewayProcess(['start', '--config', configFile])
}
