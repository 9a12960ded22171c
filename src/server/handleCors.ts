import type { IncomingMessage, ServerResponse } from 'node:http'
import { type CorsOptions, corsHeaders, preflightHeaders } from './corsHeaders.ts'

/**
 * CORS for the browser-callable routes (JSON-RPC and the Gas API): the headers go on whatever the
 * answer turns out to be, errors included; a preflight is answered here. True when it was one.
 */
export function handleCors(req: IncomingMessage, res: ServerResponse, cors: CorsOptions): boolean {
  const { origin } = req.headers
  if (origin === undefined) return false
  if (req.method === 'OPTIONS') {
    const headers = preflightHeaders(origin, req.headers['access-control-request-headers'], cors)
    res.writeHead(204, headers ?? {})
    res.end()
    return true
  }
  const headers = corsHeaders(origin, cors)
  if (headers) for (const name in headers) res.setHeader(name, headers[name] as string)
  return false
}
