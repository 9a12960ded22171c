import type { IncomingMessage } from 'node:http'
import { smallMessageBytes } from '../upstreams/AnswerBudget.ts'

/** A body declared small enough to be let through unread (Node discards it) on a kept connection. */
export function isSmallBody(req: IncomingMessage): boolean {
  return Number(req.headers['content-length']) <= smallMessageBytes
}
