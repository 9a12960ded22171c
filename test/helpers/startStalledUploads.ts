import { type ChildProcess, spawn } from 'node:child_process'

/**
 * The uploading client, in a process of its own (writing tens of MiB holds the test process's event
 * loop for hundreds of ms on a busy machine, and with it the clock of the clients it times): opens
 * `count` connections to `port`, each sending a request to `path` with `headers` that declares
 * `bytes` of body and sends every byte but the last, then stalls. Prints, a JSON line each, every
 * connection's status line as the gateway answers it ('' when it closes unanswered); exits once all
 * are closed.
 */
const uploaderSource = `
const { connect } = require('node:net')
const [port, path, count, bytes, headers] = process.argv.slice(1)
const extra = Object.entries(JSON.parse(headers)).map(([name, value]) => name + ': ' + value + '\\r\\n').join('')
let open = Number(count)
for (let index = 0; index < Number(count); index++) {
  const socket = connect(Number(port), '127.0.0.1')
  let received = ''
  let told = false
  const tell = (line) => {
    if (told) return
    told = true
    process.stdout.write(JSON.stringify(line) + '\\n')
  }
  socket.on('error', () => undefined)
  socket.on('data', (data) => {
    received += data.toString('latin1')
    const lineEnd = received.indexOf('\\r\\n')
    if (lineEnd !== -1) tell(received.slice(0, lineEnd))
  })
  socket.on('close', () => {
    tell('')
    if (--open === 0) process.exit(0)
  })
  socket.write('POST ' + path + ' HTTP/1.1\\r\\nhost: 127.0.0.1\\r\\ncontent-type: application/json\\r\\n' + extra +
    'content-length: ' + bytes + '\\r\\n\\r\\n')
  socket.write(Buffer.alloc(Number(bytes) - 1, 0x20))
}
`

export type StalledUploads = {
  child: ChildProcess
  /** The status line of each upload answered so far, in the order they were answered ('' for a close). */
  answered: string[]
  /** Resolves once every upload's connection is closed. */
  closed: Promise<void>
}

/** `count` uploads to `url`'s `path`, each declaring `bytes` and sent but its last byte, from their own process. */
export function startStalledUploads(
  url: string,
  path: string,
  count: number,
  bytes: number,
  headers: Record<string, string>,
): StalledUploads {
  const args = [String(new URL(url).port), path, String(count), String(bytes), JSON.stringify(headers)]
  const child = spawn(process.execPath, ['-e', uploaderSource, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const answered: string[] = []
  let pending = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString()
    const lines = pending.split('\n')
    pending = lines.pop() ?? ''
    for (const line of lines) answered.push(JSON.parse(line) as string)
  })
  const closed = new Promise<void>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code) => {
      if (code === 0) resolve()
      else reject(new Error(`the uploading client exited with ${code}`))
    })
  })
  return { child, answered, closed }
}
