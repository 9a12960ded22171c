import { blockOverrides } from './blockOverrides.ts'
import { paramLimits } from './paramLimits.ts'
import { boolean, callObject, field, invalidArgument, object, type ParamParser, tooMany } from './params.ts'
import { stateOverrides } from './stateOverrides.ts'

const flags = ['traceTransfers', 'validation', 'returnFullTransactions'] as const

/** One block of blockStateCalls; answers how many calls it holds. */
function parseBlock(value: unknown, index: number): number {
  const block = object(value, index) as Record<string, unknown>
  if (block.blockOverrides != null) blockOverrides(block.blockOverrides, index)
  if (block.stateOverrides != null) stateOverrides(block.stateOverrides, index)
  const { calls } = block
  if (calls == null) return 0
  if (!Array.isArray(calls)) throw invalidArgument(index, 'invalid field calls')
  if (calls.length > paramLimits.simulateCallsPerBlock) {
    throw tooMany(index, 'calls in one block', paramLimits.simulateCallsPerBlock)
  }
  for (const call of calls) callObject(call, index)
  return calls.length
}

/**
 * eth_simulateV1's payload: up to 256 blocks (geth's maxSimulateBlocks) of up to 5000 calls each and
 * 10,000 in all (geth's limits), each call a call object, each block's overrides checked as eth_call's.
 */
export const simulatePayload: ParamParser = (value, index) => {
  const payload = object(value, index) as Record<string, unknown>
  const blocks = payload.blockStateCalls
  if (!Array.isArray(blocks)) throw invalidArgument(index, 'expected blockStateCalls, an array of blocks')
  if (blocks.length > paramLimits.simulateBlocks) {
    throw tooMany(index, 'blocks in blockStateCalls', paramLimits.simulateBlocks)
  }
  let calls = 0
  for (const block of blocks) {
    calls += parseBlock(block, index)
    if (calls > paramLimits.simulateCalls) throw tooMany(index, 'calls', paramLimits.simulateCalls)
  }
  for (const flag of flags) if (payload[flag] != null) field(boolean, payload[flag], index, flag)
  return value
}
