import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type Server } from 'node:http'

/** One request the receiver took, and what it answered (`drop`: the connection closed unanswered). */
export type ReceivedAlert = {
  path: string
  eventId: string
  signature: string
  contentType: string
  body: string
  answer: number | 'drop'
}

export type AlertReceiver = {
  /** `http://127.0.0.1:<port>` */
  url: string
  received: ReceivedAlert[]
  close(): Promise<void>
}

/**
 * A webhook receiver on 127.0.0.1 (node:http): `answers(eventId, attempt)` says what the attempt
 * gets, a status or a connection dropped before any answer.
 */
export async function startAlertReceiver(
  answers: (eventId: string, attempt: number) => number | 'drop' = () => 200,
): Promise<AlertReceiver> {
  const received: ReceivedAlert[] = []
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const eventId = String(request.headers['tollgate-event-id'] ?? '')
      const attempt = received.filter((earlier) => earlier.eventId === eventId).length + 1
      const answer = answers(eventId, attempt)
      received.push({
        path: request.url ?? '',
        eventId,
        signature: String(request.headers['tollgate-signature'] ?? ''),
        contentType: String(request.headers['content-type'] ?? ''),
        body: Buffer.concat(chunks).toString('utf8'),
        answer,
      })
      if (answer === 'drop') request.socket.destroy()
      else response.writeHead(answer).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/**
 * A receiver's check of `Tollgate-Signature`, exactly as docs/api.md shows it: the HMAC of
 * `<t>.<body>` under the signing secret, compared in constant time, and `t` within 5 minutes.
 */
export function verifyTollgateSignature(secret: string, header: string, body: string): boolean {
  const { t, v1 } = Object.fromEntries(header.split(',').map((part) => part.split('=')))
  if (!t || !v1 || Math.abs(Date.now() / 1000 - Number(t)) > 300) return false
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest()
  const given = Buffer.from(v1, 'hex')
  return given.length === expected.length && timingSafeEqual(given, expected)
}
