import type { MethodSpec } from './methodTable.ts'

/** The steps of the request path (handleRpc and around it) that read a method spec's fields. */
export type PathStep =
  | 'validate'
  | 'price'
  | 'answerHere'
  | 'beforeSend'
  | 'route'
  | 'cache'
  | 'forward'
  | 'afterAnswer'

/**
 * What a method's calls need beyond being priced, routed, cached and sent, worked out once per
 * method from its row (methodTable's methodSpec): handleRpc runs a duty's step for the methods
 * that have it.
 */
export type MethodDuties = {
  /** Answered by the gateway itself (a local result, a subscription): never sent. */
  answerHere: boolean
  /** Params changed before sending: a filter id opened, the gas capped, a block range bounded. */
  beforeSend: boolean
  /** The answer read before it is given: a new filter's id sealed, "not found" as null, the shown head. */
  afterAnswer: boolean
}

type SpecFields = Omit<MethodSpec, 'duties'>

/**
 * Which steps read each field of a spec. Every field is named (the type requires it, and
 * methodDuties refuses a field it does not know), so a new flag is given its steps here, and a
 * method that sets it then has the duty of each: no flag can skip a duty unnoticed.
 */
export const fieldSteps: Readonly<Record<keyof SpecFields, readonly PathStep[]>> = {
  name: ['validate'],
  offered: ['validate'],
  params: ['validate'],
  contracts: ['validate'],
  costCredits: ['price'],
  localResult: ['answerHere'],
  subscriptionOnly: ['validate', 'answerHere'],
  filterRole: ['beforeSend', 'afterAnswer'],
  capsGas: ['beforeSend', 'route'],
  boundsBlockRange: ['beforeSend'],
  // read only for a range boundsBlockRange bounded: the answer's logs counted, a refused range split
  countsLogs: ['forward'],
  cacheClass: ['cache'],
  pinnedIsImmutable: ['cache'],
  failoverEligible: ['route'],
  idempotent: ['route'],
  nodeState: ['route'],
  sendsTransaction: ['route'],
  pinnedNeeds: ['route'],
  nullWhenNoBlock: ['route'],
  monotonicHead: ['afterAnswer'],
  nullWhenNotFound: ['afterAnswer'],
}

/**
 * The duties of a spec: each step of MethodDuties that reads a field whose value is not the default
 * row's. Throws on a field fieldSteps does not name (`duties`, this function's answer, aside).
 */
export function methodDuties(spec: SpecFields, defaults: SpecFields): MethodDuties {
  const duties: MethodDuties = { answerHere: false, beforeSend: false, afterAnswer: false }
  for (const field of Object.keys(spec) as (keyof SpecFields)[]) {
    // the duties themselves, derived here
    if ((field as keyof MethodSpec) === 'duties') continue
    const steps = fieldSteps[field]
    if (steps === undefined) {
      throw new Error(`method spec field ${field} is read by no step: name its steps in fieldSteps`)
    }
    if (spec[field] === defaults[field]) continue
    for (const step of steps) if (step in duties) duties[step as keyof MethodDuties] = true
  }
  return duties
}
