import WebSocket from 'ws'

/** What a WebSocket's end looked like to its client. */
type Closed = { code: number; reason: string }

/** A client WebSocket, open: its messages (parsed) as they come, and its end. */
export async function openSocket(url: string) {
  const socket = new WebSocket(url)
  const messages: { id?: unknown; result?: unknown; error?: { message: string } }[] = []
  socket.on('message', (data) => messages.push(JSON.parse(data.toString())))
  const closed = new Promise<Closed>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  )
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  return { socket, messages, closed }
}
