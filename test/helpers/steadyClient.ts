import { Agent, request } from 'node:http'
import { setTimeout as delay } from 'node:timers/promises'
import { rpcBody } from './postJson.ts'

/**
 * One call of the steady client: when it was sent (ms after the client started), how long it took,
 * and what was wrong with its answer if anything.
 */
export type SteadySample = { method: string; atMs: number; ms: number; fault?: string }

/** The steady client's figures over its calls, in whole milliseconds (`worstAtMs`: when the worst was sent). */
export type SteadyFigures = {
  calls: number
  p50Ms: number
  p99Ms: number
  maxMs: number
  worstAtMs: number
  faults: string[]
}

export type SteadyClient = {
  /** Calls answered so far. */
  count(): number
  /** Stops asking: every call's sample, once the call in progress has its answer. */
  stop(): Promise<SteadySample[]>
}

/** A cheap call and the result it must be answered with. */
type SteadyCall = { body: unknown; expects: (result: unknown) => boolean }

/** The least time from the start of one call to the start of the next: at most 50 calls a second. */
const paceMs = 20
/** Calls made by every steady client so far: each address and calldata new, whichever client asks. */
let made = 0

/**
 * Another key's application, as a steady client of a node does it: one cheap call after another on
 * one kept-alive connection, in turn eth_chainId, eth_blockNumber, eth_getBalance of a new address
 * (the cache cannot answer it: the node does) and an eth_call of the contract at `contract`, whose
 * code returns 42 (new calldata each time, for the same reason), at most 50 a second. Each call is
 * timed from its sending to the last byte of its answer; an answer other than 200 with the expected
 * result is a fault, kept with the sample.
 */
export function startSteadyClient(
  endpoint: string,
  contract: string,
  headers: Record<string, string>,
): SteadyClient {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const samples: SteadySample[] = []
  let asking = true
  const nextCall = (): SteadyCall => {
    const index = made++
    const unique = `0x${(0xc0ffee000000 + index).toString(16).padStart(40, '0')}`
    switch (index % 4) {
      case 0:
        return { body: rpcBody('eth_chainId', [], index), expects: (result) => result === '0x7a69' }
      case 1:
        return {
          body: rpcBody('eth_blockNumber', [], index),
          expects: (result) => typeof result === 'string' && /^0x[0-9a-f]+$/.test(result),
        }
      case 2:
        return { body: rpcBody('eth_getBalance', [unique, 'latest'], index), expects: (r) => r === '0x0' }
      default:
        return {
          body: rpcBody('eth_call', [{ to: contract, data: unique }, 'latest'], index),
          expects: (result) => result === `0x${'2a'.padStart(64, '0')}`,
        }
    }
  }
  const startedMs = performance.now()
  const asked = (async () => {
    while (asking) {
      const call = nextCall()
      const atMs = performance.now() - startedMs
      const [sample] = await Promise.all([timedCall(endpoint, agent, call, headers), delay(paceMs)])
      samples.push({ ...sample, atMs })
    }
    agent.destroy()
  })()
  return {
    count: () => samples.length,
    async stop() {
      asking = false
      await asked
      return samples
    },
  }
}

/** One call on `agent`'s connection, timed; a fault when it is not answered 200 with what it expects. */
function timedCall(
  endpoint: string,
  agent: Agent,
  call: SteadyCall,
  headers: Record<string, string>,
): Promise<Omit<SteadySample, 'atMs'>> {
  const body = JSON.stringify(call.body)
  const { method } = call.body as { method: string }
  const startedMs = performance.now()
  return new Promise((resolve) => {
    const faulty = (fault: string) => resolve({ method, ms: performance.now() - startedMs, fault })
    const sent = request(
      endpoint,
      { agent, method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          text += chunk
        })
        res.on('error', (err) => faulty(`${method}: ${err.message}`))
        res.on('end', () => {
          const ms = performance.now() - startedMs
          const answer = parsed(text)
          if (res.statusCode === 200 && call.expects(answer?.result)) resolve({ method, ms })
          else resolve({ method, ms, fault: `${method}: ${res.statusCode} ${text.slice(0, 200)}` })
        })
      },
    )
    sent.on('error', (err) => faulty(`${method}: ${err.message}`))
    sent.end(body)
  })
}

function parsed(text: string): { result?: unknown } | undefined {
  try {
    return JSON.parse(text) as { result?: unknown }
  } catch {
    return undefined
  }
}

/** Calls, median, 99th percentile and worst latency of `samples`, and their faults. */
export function toSteadyFigures(samples: SteadySample[]): SteadyFigures {
  const sorted = samples.map((sample) => sample.ms).sort((a, b) => a - b)
  const worst = samples.reduce<SteadySample | undefined>(
    (most, sample) => (most && most.ms >= sample.ms ? most : sample),
    undefined,
  )
  const at = (quantile: number) =>
    Math.round(sorted[Math.max(0, Math.ceil(quantile * sorted.length) - 1)] ?? 0)
  return {
    calls: samples.length,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: Math.round(sorted[sorted.length - 1] ?? 0),
    worstAtMs: Math.round(worst?.atMs ?? 0),
    faults: samples.flatMap((sample) => sample.fault ?? []),
  }
}
