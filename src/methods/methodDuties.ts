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

/**
 * The duties of a spec: each step of MethodDuties that `fieldSteps` says reads a field whose value
 * is not the default row's. Throws on a field `fieldSteps` does not name (`duties`, this function's
 * answer, aside), so that no field can skip a duty unnoticed.
 */
export function methodDuties<Spec extends object>(
  spec: Spec,
  defaults: Spec,
  fieldSteps: Readonly<Record<string, readonly PathStep[]>>,
): MethodDuties {
  const duties: MethodDuties = { answerHere: false, beforeSend: false, afterAnswer: false }
  for (const field of Object.keys(spec) as (keyof Spec & string)[]) {
    if (field === 'duties') continue
    const steps = fieldSteps[field]
    if (steps === undefined) {
      throw new Error(`method spec field ${field} is read by no step: name its steps in fieldSteps`)
    }
    if (spec[field] === defaults[field]) continue
    for (const step of steps) if (step in duties) duties[step as keyof MethodDuties] = true
  }
  return duties
}
