// The counting proxy of bench/workload.ts, between a gateway and the node: every POST is forwarded as
// it came (an undici keep-alive Pool), and the JSON-RPC calls in it are counted by method, each entry
// of a batch as one. GET /counts answers the counts so far: {"total": n, "byMethod": {"eth_call": n}}.
// Usage: node --import tsx bench/lib/countingProxy.ts <upstreamUrl> <port>
import { createServer } from 'node:http'
import { Pool } from 'undici'

const [upstreamUrl = '', port = '0'] = process.argv.slice(2)
const pool = new Pool(upstreamUrl, { connections: 128, pipelining: 1 })
const headers = { 'content-type': 'application/json' }
const byMethod: Record<string, number> = {}
let total = 0

/** Counts the calls of one body (unreadable bodies count once, as `(not JSON)`). */
function count(body: Buffer): void {
  let calls: unknown
  try {
    calls = JSON.parse(body.toString())
  } catch {
    calls = [{ method: '(not JSON)' }]
  }
  for (const call of Array.isArray(calls) ? calls : [calls]) {
    const method = String((call as { method?: unknown } | null)?.method)
    byMethod[method] = (byMethod[method] ?? 0) + 1
    total++
  }
}

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200, headers).end(JSON.stringify({ total, byMethod }))
    return
  }
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', async () => {
    const body = Buffer.concat(chunks)
    count(body)
    try {
      const upstream = await pool.request({ path: '/', method: 'POST', headers, body })
      const answer = Buffer.from(await upstream.body.arrayBuffer())
      res.writeHead(upstream.statusCode, headers).end(answer)
    } catch {
      res.writeHead(502, headers).end()
    }
  })
})

server.listen(Number(port), '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : port}\n`)
})
