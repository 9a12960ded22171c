import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import type { Anvil } from '../../src/devnet/startAnvil.ts'
import { postJson, rpcBody } from './postJson.ts'

/** Hashes 1 MiB over and over until its gas runs out: endless but for its gas. */
export const endlessCode = '0x5b6210000060002050600056'

/** The probe's gas: tenths of a second of anvil, tens of /proc's 10 ms ticks. */
const probeGas = 40_000_000n

/** /proc/PID/stat's clock ticks a second (Linux's USER_HZ). */
const ticksPerSecond = 100

/**
 * The gas that keeps `anvil` on one eth_call of endlessCode for `cpuSeconds` of its CPU, and so at
 * least that long: scaled from the CPU time anvil spent on one call of probeGas (/proc). Its CPU
 * time, not the call's duration, which a busy machine draws out: gas measured so would run out
 * early once the machine is idle. How fast anvil hashes is the machine's and the release's (200M
 * gas: 3.7 s once, 1.7 s with anvil 1.7.1 on a 2-core EPYC VM).
 */
export async function measureEndlessGas(anvil: Anvil, cpuSeconds: number): Promise<bigint> {
  const { pid } = anvil.process
  assert.ok(pid !== undefined, 'anvil runs')
  const to = `0x${'e0'.repeat(20)}`
  const before = cpuTicks(pid)
  const answer = await postJson(
    anvil.url,
    rpcBody('eth_call', [
      { to, gas: `0x${probeGas.toString(16)}` },
      'latest',
      { [to]: { code: endlessCode } },
    ]),
  )
  const ticks = cpuTicks(pid) - before
  // it ran until its gas was spent, as the attack's calls would
  assert.match(answer.text, /OutOfGas/)
  assert.ok(ticks > 0, `${probeGas} gas of hashing took anvil no measurable CPU`)
  return (probeGas * BigInt(Math.ceil(cpuSeconds * ticksPerSecond))) / BigInt(ticks)
}

/** utime + stime of `pid` (every thread of it), in clock ticks. */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}
