import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

/** Ids whose text JSON.parse and JSON.stringify would not give back. */
const big = '12345678901234567890123'
const negative = '-98765432109876543210'
const fraction = '1.50'

/** An answer's text with its result taken out (block numbers move), everything else as sent. */
const shape = (text: string) => text.replace(/"result":"0x[0-9a-f]+"/g, '"result":"R"')

/**
 * Numeric JSON-RPC ids are echoed exactly as the client wrote them, past 2^53 too, over HTTP and
 * WebSocket, single and batch, for answers from the node and errors from the gateway alike.
 */
describe('ids echoed as written', () => {
  let node: TestNode
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    gateway = await startTestGateway({ upstreams: [node.url] })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  const post = async (body: string, path = `/v3/${gateway.key}`) => {
    const response = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    return { status: response.status, text: await response.text() }
  }

  /** Each message sent once the answer to the one before came (answers may overtake one another). */
  const overSocket = async (messages: string[]) => {
    const socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`)
    await new Promise((resolve, reject) => {
      socket.once('open', resolve)
      socket.once('error', reject)
    })
    const answers: string[] = []
    try {
      for (const message of messages) {
        const answer = new Promise<string>((resolve) =>
          socket.once('message', (data) => resolve(data.toString())),
        )
        socket.send(message)
        answers.push(await answer)
      }
    } finally {
      socket.close()
    }
    return answers
  }

  it('HTTP, a single call: from the node, and the errors of the gateway', async () => {
    for (const id of [big, negative, fraction]) {
      const answer = await post(`{"jsonrpc":"2.0","id":${id},"method":"eth_blockNumber","params":[]}`)
      assert.equal(answer.status, 200)
      assert.equal(shape(answer.text), `{"jsonrpc":"2.0","id":${id},"result":"R"}`)
    }
    const unknown = await post(`{"jsonrpc": "2.0", "id": ${big}, "method": "eth_nope", "params": []}`)
    assert.equal(
      unknown.text,
      `{"jsonrpc":"2.0","id":${big},"error":{"code":-32601,"message":"the method eth_nope does not exist/is not available"}}`,
    )
    const badParams = await post(`{"jsonrpc":"2.0","id":${big},"method":"eth_getBalance","params":[1]}`)
    assert.match(badParams.text, new RegExp(`^\\{"jsonrpc":"2.0","id":${big},"error":\\{"code":-32602,`))
    // refused before the body is read (a wrong key): its id is not known, so null
    const wrongKey = await post(
      `{"jsonrpc":"2.0","id":${big},"method":"eth_blockNumber","params":[]}`,
      '/v3/nokey',
    )
    assert.equal(wrongKey.status, 401)
    assert.match(wrongKey.text, /^\{"jsonrpc":"2.0","id":null,"error":/)
    // an id that round-trips is untouched, its string twin too
    const plain = await post(`{"jsonrpc":"2.0","id":"${big}","method":"eth_blockNumber","params":[]}`)
    assert.equal(shape(plain.text), `{"jsonrpc":"2.0","id":"${big}","result":"R"}`)
  })

  it('HTTP, a call the balance refuses (402/429): the id as written, never the stand-in', async () => {
    const { key } = await gateway.app.keyAdmin.create({
      plan: 'custom',
      name: 'spent',
      dailyCredits: 10,
      creditsPerSecond: 1_000,
    })
    await gateway.app.keys.refresh()
    const refused = await post(
      `{"jsonrpc":"2.0","id":${big},"method":"eth_blockNumber","params":[]}`,
      `/v3/${key.key}`,
    )
    assert.ok(refused.status === 402 || refused.status === 429, `refused: ${refused.status}`)
    assert.match(refused.text, new RegExp(`^\\{"jsonrpc":"2.0","id":${big},"error":\\{"code":(402|429),`))
  })

  it('HTTP, a batch: each id as written, beside ids that need nothing', async () => {
    const answer = await post(
      `[{"jsonrpc":"2.0","id":${big},"method":"eth_blockNumber","params":[]},` +
        `{"jsonrpc":"2.0","id":7,"method":"eth_blockNumber","params":[]},` +
        `{"jsonrpc":"2.0","id":${negative},"method":"eth_nope","params":[]},` +
        `{"jsonrpc":"1.0","id":${fraction},"method":"eth_blockNumber","params":[]}]`,
    )
    assert.equal(
      shape(answer.text),
      `[{"jsonrpc":"2.0","id":${big},"result":"R"},{"jsonrpc":"2.0","id":7,"result":"R"},` +
        `{"jsonrpc":"2.0","id":${negative},"error":{"code":-32601,"message":"the method eth_nope does not exist/is not available"}},` +
        `{"jsonrpc":"2.0","id":${fraction},"error":{"code":-32600,"message":"invalid request"}}]`,
    )
  })

  it('WebSocket, single and batch', async () => {
    const [single, error, batch] = await overSocket([
      `{"jsonrpc":"2.0","id":${big},"method":"eth_blockNumber","params":[]}`,
      `{"jsonrpc":"2.0","id":${negative},"method":"eth_nope","params":[]}`,
      `[{"jsonrpc":"2.0","id":${fraction},"method":"eth_blockNumber","params":[]},{"jsonrpc":"2.0","id":${big},"method":"eth_chainId","params":[]}]`,
    ])
    assert.equal(shape(single ?? ''), `{"jsonrpc":"2.0","id":${big},"result":"R"}`)
    assert.equal(
      error,
      `{"jsonrpc":"2.0","id":${negative},"error":{"code":-32601,"message":"the method eth_nope does not exist/is not available"}}`,
    )
    assert.equal(
      shape(batch ?? ''),
      `[{"jsonrpc":"2.0","id":${fraction},"result":"R"},{"jsonrpc":"2.0","id":${big},"result":"R"}]`,
    )
  })
})
