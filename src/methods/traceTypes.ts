import { describe, invalidArgument, type ParamParser, tooMany } from './params.ts'

const known = new Set(['trace', 'vmTrace', 'stateDiff'])

/** The trace types of trace_call and trace_replay*: at most the three there are. */
export const traceTypes: ParamParser = (value, index) => {
  if (!Array.isArray(value))
    throw invalidArgument(index, `expected an array of trace types, got ${describe(value)}`)
  if (value.length > known.size) throw tooMany(index, 'trace types', known.size)
  for (const item of value) {
    if (typeof item !== 'string' || !known.has(item)) {
      throw invalidArgument(index, 'expected trace types among trace, vmTrace and stateDiff')
    }
  }
  return value
}
