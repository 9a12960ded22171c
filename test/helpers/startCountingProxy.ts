import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What a proxy saw of the requests whose body holds one marker. */
export type Tally = {
  /** Requests that reached the node. */
  sent: number
  /** Requests the node has not answered yet (nor the gateway given up on). */
  inFlight: number
  /** The most there were at once. */
  maxInFlight: number
}

export type CountingProxy = {
  /** The node's URL through the proxy. */
  url: string
  /** Counts from now on the requests whose body holds `marker` (a method name, an address). */
  watch(marker: string): Tally
  /** Requests the node has not answered yet, those the gateway gave up on included. */
  atNode(): number
  close(): Promise<void>
}

/**
 * An HTTP proxy in front of a real node (anvil) that counts the JSON-RPC requests the gateway sends
 * it: how many of a kind reached the node, and how many were there at once. A request the gateway
 * stops (its timeout) stays open at the node's side until the node answers it, for nobody: anvil
 * works on such a call to its end either way, and the proxy then sees when it is done (atNode).
 */
export async function startCountingProxy(targetUrl: string): Promise<CountingProxy> {
  const target = new URL(targetUrl)
  const tallies = new Map<string, Tally>()
  let atNode = 0
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = []
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
    incoming.on('end', () => {
      const body = Buffer.concat(chunks)
      const text = body.toString()
      const counted = [...tallies].filter(([marker]) => text.includes(marker)).map(([, tally]) => tally)
      for (const tally of counted) {
        tally.sent++
        tally.inFlight++
        tally.maxInFlight = Math.max(tally.maxInFlight, tally.inFlight)
      }
      let done = false
      const finish = () => {
        if (done) return
        done = true
        for (const tally of counted) tally.inFlight--
      }
      atNode++
      let answered = false
      const nodeDone = () => {
        if (answered) return
        answered = true
        atNode--
      }
      const forwarded = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: incoming.headers,
        },
        (answer) => {
          answer.on('end', finish)
          answer.on('close', nodeDone)
          // the gateway gone (before the answer, or while it came): the answer is read for nobody
          if (outgoing.destroyed) {
            answer.resume()
            return
          }
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(outgoing)
          outgoing.on('close', () => answer.resume())
        },
      )
      forwarded.on('error', () => {
        finish()
        nodeDone()
        outgoing.destroy()
      })
      outgoing.on('close', finish)
      forwarded.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    watch(marker) {
      const tally: Tally = { sent: 0, inFlight: 0, maxInFlight: 0 }
      tallies.set(marker, tally)
      return tally
    },
    atNode: () => atNode,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
