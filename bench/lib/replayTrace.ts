import { setTimeout as sleep } from 'node:timers/promises'
import { Agent } from 'undici'
import type { Address, Hash } from 'viem'
import { createRandom } from '../../test/helpers/createRandom.ts'
import { callRpc, type RpcAnswer } from './callRpc.ts'
import type { Tick, UserTrace } from './planTrace.ts'
import type { DappChain } from './startDappChain.ts'
import { type TraceCall, toHeadCall, toTraceCall, type UserView } from './toTraceCall.ts'
import type { HeadWatcher } from './watchHeads.ts'

/** One client call as replayed: what it asked, what it was answered, when, and the node's head then. */
export type AnsweredCall = TraceCall & {
  user: number
  answer: RpcAnswer
  latencyMs: number
  answeredAtMs: number
  /** The node's head (its own announcement) when the call was sent. */
  headAtSend: number
  /** The node's head when the answer arrived. */
  headAtAnswer: number
}

/** What a user knows for the whole replay. */
type Known = Pick<UserView, 'self' | 'dapp' | 'peer'>

export type ReplayOptions = { chain: DappChain; watcher: HeadWatcher; seed: number }

/**
 * Replays `trace` against `urls` (each call to one of them at random: a fleet behind a load balancer)
 * in real time from now: each user's ticks at their moments, one after another. Resolves with every
 * call once the last is answered.
 */
export async function replayTrace(
  trace: UserTrace[],
  urls: string[],
  { chain, watcher, seed }: ReplayOptions,
): Promise<AnsweredCall[]> {
  // 128 connections to each URL, as a load balancer's pool: tollgate closes one address's 257th
  const agent = new Agent({
    connections: 128,
    keepAliveTimeout: 10_000,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  })
  const answered: AnsweredCall[] = []
  const startedMs = Date.now()
  try {
    await Promise.all(
      trace.map(async ({ user, ticks }) => {
        const route = createRandom(seed * 7_919 + user)
        const ask = async (call: TraceCall) => {
          const url = urls[route.int(urls.length)] as string
          const headAtSend = watcher.head()
          const sentAt = performance.now()
          const answer = await callRpc(url, call.method, call.params, agent).catch(
            (error: Error): RpcAnswer => ({ error: error.message }),
          )
          const latencyMs = performance.now() - sentAt
          answered.push({
            ...call,
            user,
            answer,
            latencyMs,
            answeredAtMs: Date.now(),
            headAtSend,
            headAtAnswer: watcher.head(),
          })
          return answer
        }
        const dapp = chain.dappOf(user)
        const peers = chain.users.filter((_, each) => chain.dappOf(each) === dapp)
        const self = chain.users[user] as Address
        const known: Known = { self, dapp, peer: peers[(peers.indexOf(self) + 1) % peers.length] as Address }
        let ownTransaction: Hash | undefined
        for (const tick of ticks) {
          await sleep(Math.max(0, startedMs + tick.atMs - Date.now()))
          const view = { ...known, ownTransaction }
          ownTransaction = (await replayTick(tick, user, view, ask, chain, watcher)) ?? ownTransaction
        }
      }),
    )
  } finally {
    await agent.close()
  }
  return answered
}

/** One tick: its head read, then its drawn calls (each at its moment), then its deposit (whose hash it resolves with). */
async function replayTick(
  tick: Tick,
  user: number,
  known: Known & Pick<UserView, 'ownTransaction'>,
  ask: (call: TraceCall) => Promise<RpcAnswer>,
  chain: DappChain,
  watcher: HeadWatcher,
): Promise<Hash | undefined> {
  const head = await ask(toHeadCall(tick.headRead))
  const view: UserView = {
    ...known,
    block: blockNumberOf(head) ?? watcher.head(),
    recent: chain.recentTransactions(known.dapp),
  }
  await Promise.all(
    tick.draws.map(async (draw) => {
      await sleep(draw.afterMs)
      return ask(toTraceCall(draw, view))
    }),
  )
  if (tick.sendTag === undefined) return undefined
  return chain.sendDeposit(user, tick.sendTag).catch((error: Error) => {
    process.stderr.write(`deposit of user ${user}: ${error.message}\n`)
    return undefined
  })
}

/** The block number an eth_blockNumber or latest-block answer names. */
export function blockNumberOf(answer: RpcAnswer): number | undefined {
  if (!('result' in answer)) return undefined
  const { result } = answer
  if (typeof result === 'string') return Number(result)
  const number = (result as { number?: unknown } | null)?.number
  return typeof number === 'string' ? Number(number) : undefined
}
