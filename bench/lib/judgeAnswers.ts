import { isDeepStrictEqual } from 'node:util'
import { callRpc, type RpcAnswer } from './callRpc.ts'
import { type AnsweredCall, blockNumberOf } from './replayTrace.ts'
import { toHex } from './toTraceCall.ts'
import type { HeadWatcher } from './watchHeads.ts'

/**
 * What an answer was, against the node:
 * - `tip`: a call that follows the head (eth_blockNumber, the latest block, a state read at `latest`):
 *   the block it reflects, and how far behind the node's head at the moment it arrived;
 * - `pinned`: a call that names its block (or a mined transaction): whether the node answers the same;
 * - `error`: the gateway answered an error; `unchecked`: anything else (chain id, gas, code, pending).
 */
export type Judgement =
  | {
      kind: 'tip'
      /** The block the answer reflects; undefined when it matches none near the head. */
      answeredBlock: number | undefined
      /** Whether a block behind shows (a state read whose value did not change in the last block cannot). */
      checkable: boolean
      behindBlocks: number
      /** Blocks behind the node's head when the call was sent (not only when answered). */
      behindWhenSent: number
      /** For an answer behind: since the node announced the block after the one it reflects. */
      behindMs: number | undefined
      wrong: boolean
    }
  | {
      kind: 'pinned'
      wrong: boolean
      /** For a wrong state read: the nearby block whose answer it is, if any. */
      answersBlock?: number | undefined
    }
  | { kind: 'error' | 'unchecked' }

/** How far from the node's head a state read at `latest` is looked for: one ahead, five behind. */
const searched = [0, 1, -1, -2, -3, -4, -5]

/**
 * Judges every answer against the node at `nodeUrl`, straight (not through the counting proxy), after
 * the replay: every question is then one of a block by number, which the node answers the same at
 * any later moment (the bench makes no reorgs). A tip answer's block is read from it (eth_blockNumber,
 * the latest block) or found by asking the node the same call at the head the node had announced when
 * the answer arrived, then one block ahead, then up to five behind: the first that answers the same.
 */
export async function judgeAnswers(
  answers: AnsweredCall[],
  nodeUrl: string,
  watcher: HeadWatcher,
): Promise<Judgement[]> {
  const askNode = createNodeMemo(nodeUrl)
  return Promise.all(answers.map((answered) => judgeAnswer(answered, askNode, watcher)))
}

type AskNode = (method: string, params: unknown[]) => Promise<RpcAnswer>

/** Whether the node answers the call's method with `params` as the gateway answered it. */
type SameAsNode = (params: unknown[]) => Promise<boolean>

async function judgeAnswer(
  answered: AnsweredCall,
  askNode: AskNode,
  watcher: HeadWatcher,
): Promise<Judgement> {
  const { method, params, answer } = answered
  if (!('result' in answer)) return { kind: 'error' }
  const sameAsNode = async (asked: unknown[]) => isDeepStrictEqual(answer, await askNode(method, asked))
  if (method === 'eth_blockNumber' || (method === 'eth_getBlockByNumber' && params[0] === 'latest')) {
    const answeredBlock = blockNumberOf(answer) as number
    const wrong = method === 'eth_getBlockByNumber' && !(await sameAsNode([toHex(answeredBlock), params[1]]))
    return tipJudgement(answered, answeredBlock, true, wrong, watcher)
  }
  if (isStateRead(method) && params[1] === 'latest')
    return judgeStateAtLatest(answered, askNode, sameAsNode, watcher)
  if (!isPinned(method, params, answer.result)) return { kind: 'unchecked' }
  if (await sameAsNode(params)) return { kind: 'pinned', wrong: false }
  if (!isStateRead(method)) return { kind: 'pinned', wrong: true }
  const pinned = Number(params[1])
  const nearby = [pinned + 1, pinned - 1, pinned + 2, pinned - 2]
  return { kind: 'pinned', wrong: true, answersBlock: await firstSameBlock(nearby, params, sameAsNode) }
}

/** A state read at `latest`: the block near the node's head whose answer it is. */
async function judgeStateAtLatest(
  answered: AnsweredCall,
  askNode: AskNode,
  sameAsNode: SameAsNode,
  watcher: HeadWatcher,
): Promise<Judgement> {
  const { method, params, headAtAnswer } = answered
  const near = searched.map((offset) => headAtAnswer + offset).filter((block) => block >= 0)
  const answeredBlock = await firstSameBlock(near, params, sameAsNode)
  const atBlock = (block: number) => askNode(method, [params[0], toHex(block)])
  const changed = !isDeepStrictEqual(await atBlock(headAtAnswer), await atBlock(headAtAnswer - 1))
  const checkable = changed || (answeredBlock !== undefined && answeredBlock < headAtAnswer)
  return tipJudgement(answered, answeredBlock, checkable, answeredBlock === undefined, watcher)
}

/** The first of `blocks` at which the node answers a state read (`[what, block]`) the same. */
async function firstSameBlock(
  blocks: number[],
  [what]: unknown[],
  sameAsNode: SameAsNode,
): Promise<number | undefined> {
  for (const block of blocks) if (await sameAsNode([what, toHex(block)])) return block
  return undefined
}

function tipJudgement(
  { answeredAtMs, headAtSend, headAtAnswer }: AnsweredCall,
  answeredBlock: number | undefined,
  checkable: boolean,
  wrong: boolean,
  watcher: HeadWatcher,
): Judgement {
  const behindBlocks = answeredBlock === undefined ? 0 : Math.max(0, headAtAnswer - answeredBlock)
  const nextSeenMs = answeredBlock === undefined ? undefined : watcher.seenAtMs(answeredBlock + 1)
  const behindMs = behindBlocks > 0 && nextSeenMs !== undefined ? answeredAtMs - nextSeenMs : undefined
  const behindWhenSent = answeredBlock === undefined ? 0 : Math.max(0, headAtSend - answeredBlock)
  return { kind: 'tip', answeredBlock, checkable, behindBlocks, behindWhenSent, behindMs, wrong }
}

const isStateRead = (method: string) =>
  method === 'eth_call' || method === 'eth_getBalance' || method === 'eth_getTransactionCount'

const isNumber = (tag: unknown) => typeof tag === 'string' && tag.startsWith('0x')

/** A call whose answer is fixed once given: at a block by number, over a closed range, a mined transaction. */
function isPinned(method: string, params: unknown[], result: unknown): boolean {
  if (isStateRead(method)) return isNumber(params[1])
  if (method === 'eth_getBlockByNumber') return isNumber(params[0])
  if (method === 'eth_getLogs') {
    const filter = params[0] as { fromBlock?: unknown; toBlock?: unknown }
    return isNumber(filter.fromBlock) && isNumber(filter.toBlock)
  }
  if (method === 'eth_getTransactionReceipt') return result !== null
  if (method === 'eth_getTransactionByHash')
    return (result as { blockNumber?: unknown } | null)?.blockNumber != null
  return false
}

/** The node's answer to each distinct question, asked once, at most 16 at a time. */
function createNodeMemo(nodeUrl: string): AskNode {
  const asked = new Map<string, Promise<RpcAnswer>>()
  let running = 0
  const waiting: (() => void)[] = []
  const slot = async () => {
    if (running >= 16) await new Promise<void>((resolve) => waiting.push(resolve))
    running++
  }
  const release = () => {
    running--
    waiting.shift()?.()
  }
  return (method, params) => {
    const key = `${method}${JSON.stringify(params)}`
    let answer = asked.get(key)
    if (answer === undefined) {
      answer = slot().then(() => callRpc(nodeUrl, method, params).finally(release))
      asked.set(key, answer)
    }
    return answer
  }
}
