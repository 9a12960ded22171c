import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { checkFuzzAnswer } from './helpers/checkFuzzAnswer.ts'
import { expectsAnswer } from './helpers/expectsAnswer.ts'
import { type FuzzOptions, fuzzBody } from './helpers/fuzzBodies.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { devnetOver, startTestNode, type TestNode } from './helpers/startTestNode.ts'

// A seeded slice of `npm run bench:fuzz` (bench/fuzz.ts runs 100,000 bodies): the same generator,
// smaller strings and batches, so it stays well under a minute.
const maxBatchSize = 100
const fuzzOptions: Omit<FuzzOptions, 'anchors'> = {
  seed: 20261122,
  maxJsonDepth: 64,
  maxBatchSize,
  maxStringChars: 65_536,
}
const httpBodies = 3_000
const wsFrames = 1_500
/** Answers a socket may owe before the next frame is sent. */
const socketWindow = 16

const chainIdAnswer = { jsonrpc: '2.0', id: 1, result: '0x7a69' }
const depthError = {
  jsonrpc: '2.0',
  id: null,
  error: { code: -32600, message: 'invalid request: JSON nested deeper than 64 levels' },
}

/** An eth_call whose third argument (state overrides) brings the body to `depth` levels. */
function ethCallNested(depth: number): string {
  let overrides = '{}'
  for (let level = 3; level < depth; level++) overrides = `{"a":${overrides}}`
  return `{"jsonrpc":"2.0","id":7,"method":"eth_call","params":[{"to":"0x${'1'.repeat(40)}"},"latest",${overrides}]}`
}

describe('hostile input', () => {
  let node: TestNode
  let gateway: TestGateway
  let options: FuzzOptions

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    gateway = await startTestGateway({
      config: { networks: devnetOver(node), server: { host: '127.0.0.1', port: 0, maxBatchSize } },
    })
    const { fixtures } = node
    options = {
      ...fuzzOptions,
      anchors: { addresses: [fixtures.demo, ...fixtures.accounts.slice(0, 2)], hashes: [fixtures.eip1559Tx] },
    }
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  it('a body nested deeper than 64 levels is refused before parsing: 200, -32600, id null, 5 credits', async () => {
    // 5,000 levels once overflowed the stack when the call was serialised again: a 500
    const deep = await postJson(gateway.endpoint, ethCallNested(5_000))
    assert.equal(deep.status, 200)
    assert.deepEqual(deep.json, depthError)
    assert.equal(deep.headers.get('x-credits-charged'), '5')

    const justOver = await postJson(gateway.endpoint, ethCallNested(65))
    assert.deepEqual(justOver.json, depthError)
    // 64 levels are read and go on to the node, which answers the call
    const atLimit = await postJson(gateway.endpoint, ethCallNested(64))
    assert.equal(atLimit.status, 200)
    assert.equal((atLimit.json as { id: unknown }).id, 7)
    assert.notDeepEqual(atLimit.json, depthError)
    // brackets inside strings are not nesting
    const inString = await postJson(gateway.endpoint, rpcBody('eth_chainId', ['['.repeat(5_000)]))
    assert.equal(
      (inString.json as { error: { message: string } }).error.message,
      'invalid argument 0: too many arguments, want at most 0',
    )
  })

  it('over WebSocket too, and the connection stays open', async () => {
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`)
    const answers: unknown[] = []
    let arrived: (() => void) | undefined
    socket.on('message', (data) => {
      answers.push(JSON.parse(data.toString()))
      arrived?.()
    })
    await new Promise((resolve) => socket.once('open', resolve))
    const answered = (count: number) =>
      new Promise<void>((resolve) => {
        arrived = () => answers.length >= count && resolve()
        arrived()
      })
    socket.send(ethCallNested(5_000))
    await answered(1)
    socket.send(JSON.stringify(rpcBody('eth_chainId')))
    await answered(2)
    assert.deepEqual(answers, [depthError, chainIdAnswer])
    socket.close()
  })

  it(`${httpBodies.toLocaleString('en-US')} generated bodies over HTTP: every one a JSON answer, none a 5xx or an internal error`, async () => {
    const concurrency = 8
    let next = 0
    const failures: string[] = []
    const worker = async () => {
      for (let index = next++; index < httpBodies; index = next++) {
        const { kind, body } = fuzzBody(index, options)
        const response = await fetch(gateway.endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        })
        const text = await response.text()
        const where = `#${index} (${kind}) ${body.toString().slice(0, 160)}`
        if (response.status !== 200)
          failures.push(`HTTP ${response.status} for ${where}: ${text.slice(0, 200)}`)
        if (text === '') {
          if (expectsAnswer(body, options.maxJsonDepth)) failures.push(`no answer for ${where}`)
          continue
        }
        for (const problem of checkFuzzAnswer(text).problems)
          failures.push(`${problem.type} for ${where}: ${problem.detail}`)
      }
    }
    await Promise.all(Array.from({ length: concurrency }, worker))
    assert.equal(failures.length, 0, failures.slice(0, 10).join('\n'))
    const healthy = await postJson(gateway.endpoint, rpcBody('eth_chainId'))
    assert.deepEqual(healthy.json, chainIdAnswer)
  })

  it(`${wsFrames.toLocaleString('en-US')} generated frames over WebSocket: every answer owed arrives, none an internal error, the connection stays usable`, async () => {
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`)
    const failures: string[] = []
    let owed = 0
    let closed: string | undefined
    let wake: (() => void) | undefined
    const answers: string[] = []
    socket.on('message', (data) => {
      const text = data.toString()
      if (text.includes('"method":"eth_subscription"') && !text.includes('"id"')) return
      owed--
      // more answers than frames that are owed one: an answer to a notification, say
      if (owed < 0) failures.push(`an answer nothing was owed: ${text.slice(0, 200)}`)
      answers.push(text)
      for (const problem of checkFuzzAnswer(text).problems)
        failures.push(`${problem.type}: ${problem.detail}`)
      wake?.()
    })
    socket.on('close', (code, reason) => {
      closed = `${code} ${reason.toString()}`
      wake?.()
    })
    await new Promise((resolve) => socket.once('open', resolve))
    /** Waits for answers (each wakes it); answers that do not come within 30 s fail the test, not hang it. */
    const owedAtMost = async (count: number) => {
      let timedOut = false
      const deadline = setTimeout(() => {
        timedOut = true
        wake?.()
      }, 30_000)
      try {
        while (owed > count && closed === undefined) {
          if (timedOut) throw new Error(`${owed} owed answers never came`)
          await new Promise<void>((resolve) => (wake = resolve))
        }
      } finally {
        clearTimeout(deadline)
      }
    }
    for (let index = httpBodies; index < httpBodies + wsFrames; index++) {
      const { body } = fuzzBody(index, options)
      await owedAtMost(socketWindow - 1)
      if (expectsAnswer(body, options.maxJsonDepth)) owed++
      socket.send(body, { binary: typeof body !== 'string' })
    }
    owed++
    socket.send(JSON.stringify(rpcBody('eth_chainId', [], 'last')))
    await owedAtMost(0)
    assert.equal(closed, undefined, 'the gateway kept the connection open')
    assert.equal(failures.length, 0, failures.slice(0, 10).join('\n'))
    assert.deepEqual(
      answers.map((text) => JSON.parse(text)).find((answer) => answer?.id === 'last'),
      { ...chainIdAnswer, id: 'last' },
    )
    socket.close()
  })
})
