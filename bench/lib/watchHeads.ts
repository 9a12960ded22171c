import WebSocket from 'ws'

export type HeadWatcher = {
  /** The highest block number the node has announced. */
  head(): number
  /** When (Date.now()) the node announced block `number`, if it has since the watch began. */
  seenAtMs(number: number): number | undefined
  /** Calls `listener` with each new head's number. */
  onHead(listener: (number: number) => void): void
  close(): void
}

/**
 * The node's own heads, as they come (newHeads over its WebSocket): the moment each block appeared,
 * against which answers are judged fresh or behind.
 */
export async function watchHeads(wsUrl: string): Promise<HeadWatcher> {
  const socket = new WebSocket(wsUrl)
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  const seen = new Map<number, number>()
  const listeners: ((number: number) => void)[] = []
  let head = -1
  const announce = (number: number) => {
    if (number <= head) return
    // the head the watch began at appeared at a moment it did not see
    if (head >= 0) for (let each = head + 1; each <= number; each++) seen.set(each, Date.now())
    head = number
    for (const listener of listeners) listener(number)
  }
  const firstHead = new Promise<void>((resolve) => {
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as {
        id?: number
        result?: unknown
        params?: { result?: { number?: string } }
      }
      if (message.id === 1) announce(Number(message.result))
      const number = message.params?.result?.number
      if (number !== undefined) announce(Number(number))
      if (head >= 0) resolve()
    })
  })
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }))
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_subscribe', params: ['newHeads'] }))
  await firstHead
  return {
    head: () => head,
    seenAtMs: (number) => seen.get(number),
    onHead: (listener) => listeners.push(listener),
    close: () => socket.close(),
  }
}
