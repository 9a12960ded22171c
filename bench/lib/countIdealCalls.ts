import type { Judgement } from './judgeAnswers.ts'
import type { AnsweredCall } from './replayTrace.ts'

const headTags = new Set(['latest', 'pending', 'safe', 'finalized'])

/**
 * The trace's ideal, as replayed: one node call per distinct (method, params, block). A call at a tag,
 * or with no block (eth_blockNumber, gas), is at the block it was answered at (read from the answer,
 * or else the node's head when it arrived); eth_chainId at none; a receipt or transaction by hash at
 * none once mined, else at that block too. Calls and distinct calls by method.
 */
export function countIdealCalls(
  answers: AnsweredCall[],
  judgements: Judgement[],
): Map<string, { calls: number; distinct: number }> {
  const keys = new Map<string, Set<string>>()
  const calls = new Map<string, number>()
  answers.forEach((answered, index) => {
    const judgement = judgements[index] as Judgement
    const key = idealKey(answered, judgement)
    const method = keys.get(answered.method) ?? new Set()
    method.add(key)
    keys.set(answered.method, method)
    calls.set(answered.method, (calls.get(answered.method) ?? 0) + 1)
  })
  return new Map(
    [...calls].map(([method, count]) => [method, { calls: count, distinct: keys.get(method)?.size ?? 0 }]),
  )
}

function idealKey({ method, params, headAtAnswer }: AnsweredCall, judgement: Judgement): string {
  if (method === 'eth_chainId') return method
  const answeredBlock = judgement.kind === 'tip' ? judgement.answeredBlock : undefined
  const block = `@${answeredBlock ?? headAtAnswer}`
  if (namesItsBlock.has(method))
    return `${method}${JSON.stringify(params, (_, value) => (headTags.has(value) ? block : value))}`
  const mined = judgement.kind === 'pinned'
  return `${method}${JSON.stringify(params)}${mined ? '' : block}`
}

/** Methods whose params name their block (a number, or a tag that stands for one). */
const namesItsBlock = new Set([
  'eth_call',
  'eth_getBalance',
  'eth_getTransactionCount',
  'eth_getCode',
  'eth_getBlockByNumber',
  'eth_getLogs',
])
