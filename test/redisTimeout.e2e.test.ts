import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTcpProxy, type TcpProxy } from './helpers/startTcpProxy.ts'
import { startTestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { createTestPrefix, type TestPrefix } from './helpers/testRedis.ts'
import { until } from './helpers/until.ts'

/** The exchange timeout when the config sets none (metering.redisTimeoutMs). */
const defaultTimeoutMs = 1_000

describe('metering.redisTimeoutMs: how long a call waits for a slow Redis (onRedisDown: closed)', () => {
  let node: TestNode
  let prefix: TestPrefix
  let proxy: TcpProxy
  let gateways = 0

  before(async () => {
    node = await startTestNode()
    prefix = createTestPrefix()
    proxy = await startTcpProxy(prefix.url)
  })
  after(async () => {
    await proxy?.close()
    await prefix?.remove()
    await node?.stop()
  })

  /** A gateway whose Redis answers through the proxy; each its own key prefix (a fresh balance). */
  const gatewayWaiting = (redisTimeoutMs: number) =>
    startTestGateway({
      upstreams: [node.url],
      config: {
        redis: { url: proxy.url, keyPrefix: `${prefix.keyPrefix}${++gateways}:` },
        cache: { enabled: false },
        metering: { onRedisDown: 'closed', redisTimeoutMs },
      },
    })

  it('a Redis slower than the default second is waited for when the setting allows it', async () => {
    const gateway = await gatewayWaiting(30_000)
    try {
      proxy.hold()
      // the key's first call leases its credits from Redis: an exchange, held at the proxy
      const answer = postJson(gateway.endpoint, rpcBody('eth_chainId'))
      await until(() => proxy.heldBytes() > 0, 'Redis to have answered (held at the proxy)')
      // past the default: a gateway that kept it would have answered 503 by now
      await delay(defaultTimeoutMs * 1.5)
      proxy.release()
      const { status, text } = await answer
      assert.equal(status, 200, text)
    } finally {
      proxy.release()
      await gateway.close()
    }
  })

  it('past a shorter setting the call is refused with 503, and served once Redis answers again', async () => {
    const gateway = await gatewayWaiting(100)
    try {
      proxy.hold()
      const refused = await postJson(gateway.endpoint, rpcBody('eth_chainId'))
      assert.equal(refused.status, 503, refused.text)
      assert.match(refused.text, /credit balance unavailable, try again later/)
      proxy.release()
      await until(
        async () => (await postJson(gateway.endpoint, rpcBody('eth_chainId'))).status === 200,
        'the call to be served with Redis answering',
      )
    } finally {
      proxy.release()
      await gateway.close()
    }
  })
})
