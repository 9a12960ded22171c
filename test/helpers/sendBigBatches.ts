import { spawn } from 'node:child_process'

/**
 * The big client, in a process of its own (reading 320 MiB answers would hold the test process's
 * event loop, and with it the clock of the clients it times): POSTs its stdin's body `count` times
 * to `url` with `headers`, one after the other, reading each answer to its end without keeping it;
 * prints each one's status and length, a line each.
 */
const bigClientSource = `
const { request } = require('node:http')
const [url, count, headers] = process.argv.slice(1)
const chunks = []
process.stdin.on('data', (chunk) => chunks.push(chunk))
process.stdin.on('end', async () => {
  const body = Buffer.concat(chunks)
  for (let sent = 0; sent < Number(count); sent++) {
    const answer = await new Promise((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: JSON.parse(headers) }, (res) => {
        let bytes = 0
        res.on('data', (chunk) => { bytes += chunk.length })
        res.on('end', () => resolve({ status: res.statusCode, bytes }))
        res.on('error', reject)
      })
      req.on('error', reject)
      req.end(body)
    })
    process.stdout.write(JSON.stringify(answer) + '\\n')
  }
})
`

/** Runs the big client: each answer's status and length, once it has sent them all. */
export function sendBigBatches(
  url: string,
  body: string,
  count: number,
  headers: Record<string, string> = {},
): Promise<{ status: number; bytes: number }[]> {
  const allHeaders = JSON.stringify({ 'content-type': 'application/json', ...headers })
  const child = spawn(process.execPath, ['-e', bigClientSource, url, String(count), allHeaders], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stdin.end(body)
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code) => {
      if (code !== 0) reject(new Error(`the big client exited with ${code}: ${output}`))
      else
        resolve(
          output
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line)),
        )
    })
  })
}
