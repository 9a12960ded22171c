import { countIdealCalls } from './countIdealCalls.ts'
import type { Judgement } from './judgeAnswers.ts'
import type { AnsweredCall } from './replayTrace.ts'

/** Calls the counting proxy saw, all and by method. */
export type NodeCalls = { total: number; byMethod: Record<string, number> }

/** Fresh or behind, for one kind of answer that follows the head. */
type Freshness = { checked: number; behind: number; behindWhenSent: number }

export type RunSummary = {
  name: string
  seconds: number
  clientCalls: number
  /** Node calls while the trace was replayed (background included). */
  nodeCalls: NodeCalls
  /** The configuration's own node calls (head polls, fee indexer), by method, counted with no clients. */
  backgroundPerSecond: NodeCalls | undefined
  /** By method: client calls, and distinct (method, params, block): the ideal's node calls. */
  ideal: Map<string, { calls: number; distinct: number }>
  freshness: Map<string, Freshness>
  /** ms each answer behind had been behind (since the block after the one it reflects appeared). */
  behindMs: number[]
  /** Answers 2 or more blocks behind when answered, and when asked. */
  twoOrMoreBehind: { answered: number; asked: number }
  /** Tip answers matching no block near the head; pinned answers differing from the node's. */
  wrong: string[]
  errors: string[]
  /** eth_blockNumber answers lower than one the same user was given before. */
  backwards: number
  latenciesMs: number[]
  /** The 1-minute load average of the machine, before and after the replay (mean). */
  loadAverage: number
  /** How late the bench's own timers ran during the replay (its latencies include it). */
  benchDelayMs: { p99: number; max: number }
}

export type RunFacts = Pick<
  RunSummary,
  'name' | 'seconds' | 'nodeCalls' | 'backgroundPerSecond' | 'loadAverage' | 'benchDelayMs'
>

/** The figures of one configuration's replay. */
export function summarizeRun(facts: RunFacts, answers: AnsweredCall[], judgements: Judgement[]): RunSummary {
  const freshness = new Map<string, Freshness>()
  const behindMs: number[] = []
  const twoOrMoreBehind = { answered: 0, asked: 0 }
  const wrong: string[] = []
  const errors: string[] = []
  answers.forEach((answered, index) => {
    const judgement = judgements[index] as Judgement
    if ('error' in answered.answer) errors.push(`${answered.method}: ${answered.answer.error}`)
    if ((judgement.kind === 'tip' || judgement.kind === 'pinned') && judgement.wrong)
      wrong.push(describeWrong(answered, judgement))
    if (judgement.kind !== 'tip' || !judgement.checkable) return
    const label = tipLabel(answered)
    const counted = freshness.get(label) ?? { checked: 0, behind: 0, behindWhenSent: 0 }
    counted.checked++
    if (judgement.behindWhenSent > 0) counted.behindWhenSent++
    if (judgement.behindWhenSent > 1) twoOrMoreBehind.asked++
    if (judgement.behindBlocks > 0) {
      counted.behind++
      if (judgement.behindMs !== undefined) behindMs.push(judgement.behindMs)
      if (judgement.behindBlocks > 1) twoOrMoreBehind.answered++
    }
    freshness.set(label, counted)
  })
  return {
    ...facts,
    clientCalls: answers.length,
    ideal: countIdealCalls(answers, judgements),
    freshness,
    behindMs: behindMs.sort((a, b) => a - b),
    twoOrMoreBehind,
    wrong,
    errors,
    backwards: countBackwards(answers),
    latenciesMs: answers.map((answered) => answered.latencyMs).sort((a, b) => a - b),
  }
}

function describeWrong({ method, params, headAtAnswer }: AnsweredCall, judgement: Judgement): string {
  const answersBlock = judgement.kind === 'pinned' ? judgement.answersBlock : undefined
  const instead = answersBlock === undefined ? '' : ` (the node's answer at ${answersBlock})`
  return `${method}${JSON.stringify(params)} answered at head ${headAtAnswer}${instead}`
}

function tipLabel({ method }: AnsweredCall): string {
  if (method === 'eth_blockNumber') return method
  if (method === 'eth_getBlockByNumber') return 'the latest block'
  return `${method} at latest`
}

function countBackwards(answers: AnsweredCall[]): number {
  const highest = new Map<number, number>()
  let backwards = 0
  for (const { method, user, answer } of answers) {
    if (method !== 'eth_blockNumber' || !('result' in answer)) continue
    const number = Number(answer.result)
    if (number < (highest.get(user) ?? 0)) backwards++
    highest.set(user, Math.max(number, highest.get(user) ?? 0))
  }
  return backwards
}
