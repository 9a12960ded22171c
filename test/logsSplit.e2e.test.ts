import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { encodeFunctionData } from 'viem'
import { demoAbi } from '../src/devnet/contracts.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { rangeRefusals } from './helpers/rangeRefusals.ts'
import { type FakeUpstream, startFakeUpstream } from './helpers/startFakeUpstream.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

const hex = (value: bigint) => `0x${value.toString(16)}`
/** The widest range the limiters answer. */
const limit = 5n
/** Blocks holding the Demo contract's logs: 1, 2 or 3 in each. */
const blockCount = 30n

type Request = { method: string; id: unknown; params: unknown[] }
type Filter = { fromBlock?: string; toBlock?: string }

/**
 * Real anvil behind two scriptable limiters (the fake only for the refusal itself): every upstream
 * refuses eth_getLogs ranges wider than `limit` blocks with one vendor's wording, so tollgate splits
 * the range; its answer must be anvil's own answer for the whole range, byte for byte, charged the
 * method's price for each range it asked (the whole range refused, then each chunk).
 */
describe('eth_getLogs over a range every upstream refuses is split (docs/compatibility.md §7)', () => {
  let node: TestNode
  let limiters: FakeUpstream[]
  /** An upstream whose eth_getLogs fails (HTTP 503) while it answers everything else: down for logs. */
  let failing: FakeUpstream
  let gateway: TestGateway
  /** The first block holding the logs. */
  let first: bigint

  const nodeCall = async (method: string, params: unknown[]) =>
    ((await postJson(node.url, rpcBody(method, params))).json as { result: unknown }).result
  const widthOf = (request: Request) => {
    const { fromBlock, toBlock } = (request.params[0] ?? {}) as Filter
    return fromBlock?.startsWith('0x') && toBlock?.startsWith('0x')
      ? BigInt(toBlock) - BigInt(fromBlock) + 1n
      : undefined
  }
  /** The eth_getLogs calls the limiters got since `mark()` (what each had got then). */
  const mark = () => limiters.map((limiter) => limiter.requests.length)
  const logCallsSince = (marks: number[]) =>
    limiters.flatMap((limiter, index) =>
      limiter.requests.slice(marks[index]).filter((request) => request.method === 'eth_getLogs'),
    )
  /**
   * The ranges in `requests`, each once: a range asked again of the other limiter (its first attempt
   * slow on a loaded machine, or hedged) is one range.
   */
  const rangesOf = (requests: Request[]) => [
    ...new Map(requests.map((request) => [JSON.stringify(request.params[0]), request])).values(),
  ]
  /**
   * What a split that asked `requests` costs: eth_getLogs' 255 for each range asked, once however
   * many limiters refused it (the pool asks the next upstream after a refusal, as after any failure).
   */
  const chargeFor = (requests: Request[]) => String(255 * rangesOf(requests).length)
  /**
   * Each range the node was asked is charged, but the chunks the split's end stopped (at most the
   * three others of the four at once), which are free whether or not they had reached a limiter.
   */
  const assertChargedForRanges = (answer: { headers: Headers }, asked: Request[]) => {
    const charged = Number(answer.headers.get('x-credits-charged'))
    const askedCredits = Number(chargeFor(asked))
    assert.ok(
      charged <= askedCredits && askedCredits - charged <= 3 * 255,
      `${charged} credits for ${askedCredits / 255} ranges asked`,
    )
  }
  /** Each limiter refuses ranges wider than `limit` as `vendor` does; everything else reaches anvil. */
  const refuseAs = (vendor: (typeof rangeRefusals)[number], widest = limit) => {
    for (const limiter of limiters) {
      limiter.behave({
        kind: 'refuseOr',
        target: node.url,
        refuse: (request) => {
          if (request.method !== 'eth_getLogs') return undefined
          const width = widthOf(request)
          if (width === undefined || width <= widest) return undefined
          const { fromBlock, toBlock } = request.params[0] as Required<Filter>
          const error = vendor.refusal(BigInt(fromBlock), BigInt(toBlock), widest)
          return { status: vendor.status ?? 200, error }
        },
      })
    }
  }
  const getLogs = (network: string, filter: object, id: number | string = 1) =>
    postJson(`${gateway.url}/${network}/v3/${gateway.key}`, rpcBody('eth_getLogs', [filter], id))
  /**
   * Until every upstream of `name` is in use at the network's head, health-checked (a head poll)
   * until it is: what the tests count on (each range asked of every limiter, a refusal learned when
   * every one said it). The gateway promises no more than its checks find: at its start, the health
   * checks and each chain's backfill (32 blocks through the first limiter) of all these networks
   * reach the fakes at once, and on a loaded machine the fakes (in this process) may not answer them,
   * nor the liveness checks after, in 5 s, which takes a limiter out of use; no head poll brings it
   * back here (headPollMs), and a call probes it only once a cooldown.
   */
  const untilInUse = async (name: string) => {
    const network = gateway.app.networks.all.find((each) => each.name === name)
    assert.ok(network, name)
    const { members } = network.pool
    const ready = () =>
      members.every(
        (member) =>
          member.isInUse() && member.head !== undefined && member.head === network.pool.membersHead(),
      )
    for (let polls = 0; !ready(); polls++) {
      if (polls === 10) {
        const why = members.map((member) => `${member.upstream.label}: ${member.lastError ?? member.head}`)
        assert.fail(`the upstreams of ${name} are not in use at the head (${why.join('; ')})`)
      }
      await network.head.poll()
    }
  }

  before(async () => {
    node = await startTestNode({ loadBlocks: 2 })
    const sender = node.fixtures.accounts[3] as string
    first = BigInt((await nodeCall('eth_blockNumber', [])) as string) + 1n
    await nodeCall('evm_setAutomine', [false])
    try {
      let nonce = Number(await nodeCall('eth_getTransactionCount', [sender, 'latest']))
      for (let block = 0n; block < blockCount; block++) {
        for (let index = 0n; index <= block % 3n; index++) {
          await nodeCall('eth_sendTransaction', [
            {
              from: sender,
              to: node.fixtures.demo,
              data: encodeFunctionData({ abi: demoAbi, functionName: 'increment' }),
              gas: '0x30000',
              nonce: hex(BigInt(nonce++)),
            },
          ])
        }
        await nodeCall('evm_mine', [])
      }
    } finally {
      await nodeCall('evm_setAutomine', [true])
    }
    limiters = [
      await startFakeUpstream({ kind: 'proxy', target: node.url }),
      await startFakeUpstream({ kind: 'proxy', target: node.url }),
    ]
    failing = await startFakeUpstream({
      kind: 'forMethods',
      methods: ['eth_getLogs'],
      behaviour: { kind: 'status', status: 503 },
      otherwise: node.url,
    })
    // a network of its own for each vendor: a limit one learns is not another's
    const networks = [
      ...rangeRefusals.map((_, index) => `v${index}`),
      'learns',
      'halves',
      'tight',
      'one',
    ].map((name) => ({
      name,
      chainId: 31337,
      upstreams: limiters.map((limiter) => ({ url: limiter.url })),
      ...(name === 'tight' ? { maxLogsResults: 20 } : {}),
    }))
    // one limiter beside the failing upstream: the limiter alone refuses
    networks.push({
      name: 'half-down',
      chainId: 31337,
      upstreams: [{ url: (limiters[0] as FakeUpstream).url }, { url: failing.url }],
    })
    gateway = await startTestGateway({
      config: {
        networks,
        // every chunk reaches the limiters
        cache: { enabled: false },
        upstreams: { headPollMs: 600_000 },
      },
    })
  })
  after(async () => {
    await gateway?.close()
    for (const limiter of limiters ?? []) await limiter.close()
    await failing?.close()
    await node?.stop()
  })

  it('the blocks hold the logs the tests count on', async () => {
    const logs = (await nodeCall('eth_getLogs', [
      { fromBlock: hex(first), toBlock: hex(first + blockCount - 1n), address: node.fixtures.demo },
    ])) as unknown[]
    assert.equal(logs.length, 60)
  })

  for (const [index, vendor] of rangeRefusals.entries()) {
    it(`${vendor.vendor}${vendor.status ? `, HTTP ${vendor.status}` : ''}: anvil's own answer for the whole range, charged for each range asked`, async () => {
      await untilInUse(`v${index}`)
      refuseAs(vendor)
      const before = mark()
      const filter = {
        fromBlock: hex(first),
        toBlock: hex(first + blockCount - 1n),
        address: node.fixtures.demo,
      }
      const answer = await getLogs(`v${index}`, filter, `split-${index}`)
      const direct = await postJson(node.url, rpcBody('eth_getLogs', [filter], `split-${index}`))
      assert.equal(answer.status, 200)
      assert.equal(answer.text, direct.text, 'byte for byte')
      const asked = logCallsSince(before)
      assert.ok(
        asked.some((request) => (widthOf(request) ?? 0n) > limit),
        'the whole range was asked first',
      )
      assert.ok(asked.length > 2, 'then the chunks')
      // each range once: a chunk asked again (its first upstream slow or failing) is one range, charged once
      const chunks = rangesOf(asked.filter((request) => (widthOf(request) ?? 0n) <= limit)).length
      assert.ok(chunks >= 6, `each chunk answered (${chunks})`)
      assert.equal(answer.headers.get('x-credits-charged'), chargeFor(asked), 'each range asked at 255')
      assert.ok(Number(answer.headers.get('x-credits-charged')) >= 255 * (chunks + 1))
    })
  }

  it('a stated limit is remembered: the next wide query is split at once, without a refused call', async () => {
    const dRpc = rangeRefusals.find((vendor) => vendor.vendor === 'dRPC') as (typeof rangeRefusals)[number]
    await untilInUse('learns')
    refuseAs(dRpc)
    const filter = { fromBlock: hex(first), toBlock: hex(first + 19n), address: node.fixtures.demo }
    await getLogs('learns', filter)
    const before = mark()
    const wider = { ...filter, toBlock: hex(first + blockCount - 1n) }
    const answer = await getLogs('learns', wider, 'again')
    const direct = await postJson(node.url, rpcBody('eth_getLogs', [wider], 'again'))
    assert.equal(answer.text, direct.text)
    const asked = rangesOf(logCallsSince(before))
    assert.deepEqual(
      asked.map((request) => widthOf(request)),
      [5n, 5n, 5n, 5n, 5n, 5n],
      'six chunks of 5 blocks, none refused',
    )
    assert.equal(answer.headers.get('x-credits-charged'), String(6 * 255), 'the six chunks')
  })

  it('a width that worked after refusals that state none (besu) is remembered too: the next wide query is split at once', async () => {
    const besu = rangeRefusals.find((vendor) =>
      vendor.vendor.startsWith('besu'),
    ) as (typeof rangeRefusals)[number]
    await untilInUse('halves')
    refuseAs(besu, 4n)
    const filter = { fromBlock: hex(first), toBlock: hex(first + 15n), address: node.fixtures.demo }
    await getLogs('halves', filter)
    const before = mark()
    const other = { fromBlock: hex(first + 2n), toBlock: hex(first + 17n) }
    const answer = await getLogs('halves', other, 'again')
    assert.equal(answer.text, (await postJson(node.url, rpcBody('eth_getLogs', [other], 'again'))).text)
    const asked = rangesOf(logCallsSince(before))
    // 16 blocks halved to 8 (refused) and 4 (answered): another filter's 16 blocks go as four of 4
    assert.deepEqual(
      asked.map((request) => widthOf(request)),
      [4n, 4n, 4n, 4n],
      'four chunks of 4 blocks, none refused',
    )
    assert.equal(answer.headers.get('x-credits-charged'), String(4 * 255))
  })

  it('a limit one upstream states while another fails is not remembered: the range is split, and the next wide query asked whole first', async () => {
    const dRpc = rangeRefusals.find((vendor) => vendor.vendor === 'dRPC') as (typeof rangeRefusals)[number]
    await untilInUse('half-down')
    refuseAs(dRpc)
    const filter = { fromBlock: hex(first), toBlock: hex(first + 19n), address: node.fixtures.demo }
    const answer = await getLogs('half-down', filter, 'half')
    assert.equal(answer.text, (await postJson(node.url, rpcBody('eth_getLogs', [filter], 'half'))).text)
    assert.ok(
      failing.requests.some((request) => request.method === 'eth_getLogs'),
      'the failing upstream was asked',
    )
    const before = mark()
    const again = await getLogs('half-down', filter, 'again')
    assert.equal(again.text, (await postJson(node.url, rpcBody('eth_getLogs', [filter], 'again'))).text)
    assert.equal(
      widthOf(logCallsSince(before)[0] as Request),
      20n,
      'the whole range first: no limit was learned',
    )
  })

  it("the gateway's result limit applies to the merged answer", async () => {
    await untilInUse('tight')
    refuseAs(rangeRefusals[0] as (typeof rangeRefusals)[number])
    const filter = {
      fromBlock: hex(first),
      toBlock: hex(first + blockCount - 1n),
      address: node.fixtures.demo,
    }
    const before = mark()
    const refused = await getLogs('tight', filter, 'many')
    assertChargedForRanges(refused, logCallsSince(before))
    // blocks hold 1, 2, 3, 1, 2, 3, ... logs: the range suggested ends at the last block whose logs fit in 20
    const counts = [...Array(Number(blockCount)).keys()].map((block) => (block % 3) + 1)
    let total = 0
    let past = 0
    while (total + (counts[past] as number) <= 20) total += counts[past++] as number
    assert.deepEqual(refused.json, {
      jsonrpc: '2.0',
      id: 'many',
      error: {
        code: -32005,
        message: `query returned more than 20 results. Try with this block range [${hex(first)}, ${hex(first + BigInt(past) - 1n)}].`,
      },
    })
  })

  it('a block no upstream answers alone: the node refusal, never a 503; an HTTP 400 refusal with another upstream answering is not held against the limiter', async () => {
    const besu = rangeRefusals.find((vendor) =>
      vendor.vendor.startsWith('besu'),
    ) as (typeof rangeRefusals)[number]
    await untilInUse('one')
    const members = gateway.app.networks.all.find((each) => each.name === 'one')?.pool.members ?? []
    const failuresBefore = members.map((member) => member.failures)
    refuseAs(besu, 0n)
    const filter = { fromBlock: hex(first), toBlock: hex(first + 1n), address: node.fixtures.demo }
    const before = mark()
    const refused = await getLogs('one', filter, 'none')
    assert.equal(refused.status, 200)
    assertChargedForRanges(refused, logCallsSince(before))
    assert.deepEqual(refused.json, {
      jsonrpc: '2.0',
      id: 'none',
      error: { code: -32005, message: 'Requested range exceeds maximum RPC range limit' },
    })
    assert.deepEqual(
      members.map((member) => member.failures),
      failuresBefore,
      'the refusals of every limiter say nothing of them',
    )

    // whichever limiter is asked first refuses with HTTP 400, the other answers: the answer, and the
    // refusing limiter kept well
    let refusals = 0
    for (const limiter of limiters) {
      limiter.behave({
        kind: 'refuseOr',
        target: node.url,
        refuse: (request) => {
          if (request.method !== 'eth_getLogs' || refusals > 0) return undefined
          refusals++
          return { status: 400, error: besu.refusal(0n, 1n, 0n) }
        },
      })
    }
    // the other limiter in use for this call, the point of it: checked again, as a liveness check begun
    // at the gateway's start may have taken one out of use since
    await untilInUse('one')
    const failures = members.map((member) => member.failures)
    const answered = await getLogs('one', filter, 'other')
    const direct = await postJson(node.url, rpcBody('eth_getLogs', [filter], 'other'))
    assert.equal(answered.status, 200)
    assert.equal(answered.text, direct.text)
    assert.equal(refusals, 1, 'one limiter refused it first')
    assert.deepEqual(
      members.map((member) => member.failures),
      failures,
      'a refusal of the request says nothing of the upstream',
    )
  })
})
