import { ParamLimitError } from '../errors/rpcErrors.ts'
import { blockOverrides } from './blockOverrides.ts'
import { toGethFieldName } from './gethFieldName.ts'
import { paramLimits } from './paramLimits.ts'
import {
  boolean,
  field,
  invalidArgument,
  object,
  type ParamParser,
  quantity,
  tooLarge,
  tooMany,
} from './params.ts'
import { parseGoDurationNs } from './parseGoDurationNs.ts'
import { stateOverrides } from './stateOverrides.ts'

/**
 * The tracers nodes carry, by name: geth's native ones (anvil and reth have most of them) and the
 * JavaScript ones geth bundles. Any other `tracer` is JavaScript code for the node to run: refused.
 */
const builtInTracers = new Set([
  'callTracer',
  'flatCallTracer',
  'prestateTracer',
  '4byteTracer',
  'noopTracer',
  'muxTracer',
  'erc7562Tracer',
  'bigramTracer',
  'evmdisTracer',
  'opcountTracer',
  'trigramTracer',
  'unigramTracer',
  'callTracerLegacy',
  'prestateTracerLegacy',
  'noopTracerLegacy',
  '4byteTracerLegacy',
])

const tracerWhy = "expected tracer to be one of the node's built-in tracers by name, such as callTracer"

function tracerName(value: unknown, index: number): string {
  if (typeof value !== 'string' || !builtInTracers.has(value)) throw invalidArgument(index, tracerWhy)
  return value
}

/**
 * Walks a tracerConfig: at most 1024 keys and items in all, objects nested at most 3 deep. A
 * muxTracer's config names its tracers: they must be built-in ones too.
 */
function checkTracerConfig(config: unknown, isMux: boolean, index: number): void {
  object(config, index)
  let values = 0
  const walk = (value: unknown, depth: number, muxed: boolean): void => {
    if (typeof value !== 'object' || value === null) return
    if (depth > paramLimits.tracerConfigDepth) {
      throw new ParamLimitError(
        index,
        `tracerConfig nested too deep, the limit is ${paramLimits.tracerConfigDepth} levels`,
      )
    }
    const entries = Array.isArray(value) ? value.map((item) => ['', item] as const) : Object.entries(value)
    for (const [key, item] of entries) {
      if (++values > paramLimits.tracerConfigValues) {
        throw tooMany(index, 'values in tracerConfig', paramLimits.tracerConfigValues)
      }
      if (muxed) tracerName(key, index)
      walk(item, depth + 1, muxed && key === 'muxTracer')
    }
  }
  walk(config, 1, isMux)
}

const nonNegativeInteger: ParamParser = (value, index) => {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalidArgument(index, 'expected a non-negative integer')
  }
  return value
}

/** A Go duration, as geth reads `timeout` ("10s", "1m30s", "500ms"), up to the limit. */
const timeout: ParamParser = (value, index) => {
  let ns: bigint
  try {
    if (typeof value !== 'string' || value.length > 32) throw new Error('not a duration')
    ns = parseGoDurationNs(value)
  } catch {
    throw invalidArgument(index, 'expected a duration such as 10s')
  }
  if (ns > BigInt(paramLimits.traceTimeoutSeconds) * 1_000_000_000n) {
    throw tooLarge(index, 'timeout', `${paramLimits.traceTimeoutSeconds}s`)
  }
  return value
}

const reexec: ParamParser = (value, index) => {
  nonNegativeInteger(value, index)
  if ((value as number) > paramLimits.traceReexecBlocks) {
    throw tooLarge(index, 'reexec', `${paramLimits.traceReexecBlocks} blocks`)
  }
  return value
}

/** geth's TraceConfig and the struct logger's fields; others pass through. */
const optionFields = new Map<string, ParamParser>([
  ['timeout', timeout],
  ['reexec', reexec],
  ['limit', nonNegativeInteger],
  ['disableStorage', boolean],
  ['disableStack', boolean],
  ['enableMemory', boolean],
  ['enableReturnData', boolean],
  ['debug', boolean],
])

/** debug_traceCall's TraceCallConfig adds overrides and a transaction index. */
const callOptionFields = new Map<string, ParamParser>([
  ...optionFields,
  ['stateOverrides', stateOverrides],
  ['blockOverrides', blockOverrides],
  ['txIndex', quantity],
])

/** Whether any key geth could read as `tracer` names muxTracer (geth reads the last). */
function isMuxTraced(options: Record<string, unknown>): boolean {
  for (const name in options) {
    if (options[name] === 'muxTracer' && toGethFieldName(name) === 'tracer') return true
  }
  return false
}

/**
 * Checks each field as geth reads its name (`Tracer` is `tracer`): two keys geth reads as one field
 * are both checked, whichever it would take.
 */
function withFields(fields: ReadonlyMap<string, ParamParser>): ParamParser {
  const folded = new Map([...fields.keys()].map((name) => [toGethFieldName(name), name]))
  return (value, index) => {
    const options = object(value, index) as Record<string, unknown>
    for (const written in options) {
      const fieldValue = options[written]
      if (fieldValue === undefined || fieldValue === null) continue
      const name = toGethFieldName(written)
      if (name === 'tracer') tracerName(fieldValue, index)
      else if (name === 'tracerconfig') checkTracerConfig(fieldValue, isMuxTraced(options), index)
      else {
        const known = folded.get(name)
        if (known !== undefined) field(fields.get(known) as ParamParser, fieldValue, index, known)
      }
    }
    return value
  }
}

/**
 * debug_traceTransaction's and debug_traceBlockBy*'s options: a built-in tracer by name (a
 * JavaScript tracer is code the node would run: refused), a bounded tracerConfig, each known field
 * in its form.
 */
export const traceOptions = withFields(optionFields)

/** debug_traceCall's options: traceOptions', and state and block overrides as eth_call's. */
export const traceCallOptions = withFields(callOptionFields)
