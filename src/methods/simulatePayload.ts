import { blockOverrides } from './blockOverrides.ts'
import { callObject } from './callObject.ts'
import { toGethFieldName } from './gethFieldName.ts'
import { paramLimits } from './paramLimits.ts'
import { boolean, field, invalidArgument, object, type ParamParser, tooMany } from './params.ts'
import { stateOverrides } from './stateOverrides.ts'

/** The payload's flags, by the name geth matches them under. */
const flags = new Map(
  ['traceTransfers', 'validation', 'returnFullTransactions'].map((name) => [toGethFieldName(name), name]),
)

/** One list of calls; answers how many it holds. */
function parseCalls(calls: unknown, index: number): number {
  if (!Array.isArray(calls)) throw invalidArgument(index, 'invalid field calls')
  if (calls.length > paramLimits.simulateCallsPerBlock) {
    throw tooMany(index, 'calls in one block', paramLimits.simulateCallsPerBlock)
  }
  for (const call of calls) callObject(call, index)
  return calls.length
}

/** One block of blockStateCalls; answers how many calls it holds (in every key geth reads as `calls`). */
function parseBlock(value: unknown, index: number): number {
  const block = object(value, index) as Record<string, unknown>
  let calls = 0
  for (const written in block) {
    const fieldValue = block[written]
    if (fieldValue === undefined || fieldValue === null) continue
    const name = toGethFieldName(written)
    if (name === 'blockoverrides') blockOverrides(fieldValue, index)
    else if (name === 'stateoverrides') stateOverrides(fieldValue, index)
    else if (name === 'calls') calls += parseCalls(fieldValue, index)
  }
  return calls
}

/** One blockStateCalls list: up to 256 blocks, 10,000 calls in all. */
function parseBlocks(blocks: unknown, index: number): void {
  if (!Array.isArray(blocks)) throw invalidArgument(index, 'expected blockStateCalls, an array of blocks')
  if (blocks.length > paramLimits.simulateBlocks) {
    throw tooMany(index, 'blocks in blockStateCalls', paramLimits.simulateBlocks)
  }
  let calls = 0
  for (const block of blocks) {
    calls += parseBlock(block, index)
    if (calls > paramLimits.simulateCalls) throw tooMany(index, 'calls', paramLimits.simulateCalls)
  }
}

/**
 * eth_simulateV1's payload: up to 256 blocks (geth's maxSimulateBlocks) of up to 5000 calls each and
 * 10,000 in all (geth's limits), each call a call object, each block's overrides checked as eth_call's.
 * Names are read as geth reads them (`BlockStateCalls` is `blockStateCalls`): every key geth could
 * read as a field is checked as that field.
 */
export const simulatePayload: ParamParser = (value, index) => {
  const payload = object(value, index) as Record<string, unknown>
  let hasBlocks = false
  for (const written in payload) {
    const fieldValue = payload[written]
    const name = toGethFieldName(written)
    if (name === 'blockstatecalls') {
      parseBlocks(fieldValue, index)
      hasBlocks = true
    } else if (fieldValue !== undefined && fieldValue !== null) {
      const flag = flags.get(name)
      if (flag !== undefined) field(boolean, fieldValue, index, flag)
    }
  }
  if (!hasBlocks) throw invalidArgument(index, 'expected blockStateCalls, an array of blocks')
  return value
}
