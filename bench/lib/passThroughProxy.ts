// The platform reference for bench/: the least a Node gateway can do per call. node:http in, an
// undici keep-alive Pool out, an in-memory key check and a per-key counter; no validation, no
// metering, no logs. With `headers` (bench:instructions' second reference) it answers with the
// headers tollgate's answers carry: the three credit headers (from its counter) and Content-Length.
// Usage: node --import tsx bench/lib/passThroughProxy.ts <upstreamUrl> <port> <key> [headers]
import { createServer } from 'node:http'
import { Pool } from 'undici'

const [upstreamUrl = '', port = '0', key = '', answers = 'plain'] = process.argv.slice(2)
const creditHeaders = answers === 'headers'
const pool = new Pool(upstreamUrl, { connections: 128, pipelining: 1 })
const served = new Map<string, number>([[key, 0]])
const headers = { 'content-type': 'application/json' }

const server = createServer((req, res) => {
  const requestKey = (req.url ?? '').slice(4)
  const count = served.get(requestKey)
  if (req.method !== 'POST' || count === undefined) {
    res
      .writeHead(401, headers)
      .end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"invalid project id"}}')
    return
  }
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', async () => {
    try {
      const upstream = await pool.request({ path: '/', method: 'POST', headers, body: Buffer.concat(chunks) })
      const body = Buffer.from(await upstream.body.arrayBuffer())
      served.set(requestKey, count + 1)
      if (!creditHeaders) {
        res.writeHead(upstream.statusCode, headers).end(body)
        return
      }
      const resetSeconds = 86_400 - Math.floor((Date.now() / 1000) % 86_400)
      res
        .writeHead(upstream.statusCode, [
          'content-type',
          'application/json',
          'x-credits-charged',
          '1',
          'x-credits-remaining',
          String(1_000_000_000 - count),
          'x-ratelimit-reset',
          String(resetSeconds),
          'content-length',
          String(body.length),
        ])
        .end(body)
    } catch {
      res.writeHead(502, headers).end()
    }
  })
})

server.listen(Number(port), '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : port}\n`)
})
