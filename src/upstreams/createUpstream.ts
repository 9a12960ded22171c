import { Pool } from 'undici'
import type { UpstreamConfig } from '../config/configSchema.ts'
import { redactUrl } from './redactUrl.ts'

export type UpstreamResponse = { status: number; body: Buffer }

export type Upstream = {
  /** Printable name: the configured name, or the redacted URL. Never the credentials. */
  label: string
  /** POSTs one JSON-RPC body; rejects on connection errors and when `signal` aborts. */
  post(body: string, signal: AbortSignal): Promise<UpstreamResponse>
  close(): Promise<void>
}

export type CreateUpstreamOptions = { connections: number; keepAliveTimeoutMs?: number }

/** One node behind a keep-alive connection pool. */
export function createUpstream(config: UpstreamConfig, options: CreateUpstreamOptions): Upstream {
  const url = new URL(config.url)
  const path = `${url.pathname}${url.search}`
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (url.username !== '' || url.password !== '') {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
    headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`
  }
  const pool = new Pool(url.origin, {
    connections: options.connections,
    pipelining: 1,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
    // the caller's signal bounds the whole call; these only stop a connection that went quiet
    headersTimeout: 0,
    bodyTimeout: 0,
  })

  return {
    label: config.name ?? redactUrl(config.url),
    async post(body, signal) {
      const response = await pool.request({ method: 'POST', path, headers, body, signal })
      const chunks: Buffer[] = []
      for await (const chunk of response.body) chunks.push(chunk as Buffer)
      return {
        status: response.statusCode,
        body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
      }
    },
    close: () => pool.close(),
  }
}
