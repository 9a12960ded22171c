import type { Buffer } from 'node:buffer'
import { RouteNotFoundError } from '../errors/httpErrors.ts'
import { toWireError } from '../errors/toWireError.ts'
import type { DashboardAsset } from './loadDashboardAssets.ts'

/** What the dashboard and the portal answer: a page, an asset, or JSON. */
export type WebAnswer = {
  status: number
  contentType: string
  body: string | Buffer
  headers: Record<string, string>
}

/** Every answer of the web build's pages: no framing, no sniffing, no referrer, scripts and styles from here only. */
const securityHeaders = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
}

/** A page of the build (its HTML), asked for again each time: its assets' names change with each build. */
export function pageAnswer(html: Buffer): WebAnswer {
  return {
    status: 200,
    contentType: 'text/html; charset=utf-8',
    body: html,
    headers: { ...securityHeaders, 'cache-control': 'no-cache' },
  }
}

/** One of the build's hashed assets, kept by browsers for good; none by that name is not found. */
export function assetAnswer(asset: DashboardAsset | undefined): WebAnswer {
  if (!asset) throw new RouteNotFoundError()
  return {
    status: 200,
    contentType: asset.contentType,
    body: asset.body,
    headers: { ...securityHeaders, 'cache-control': 'public, max-age=31536000, immutable' },
  }
}

/** JSON, never kept. */
export function jsonAnswer(status: number, body: unknown, headers: Record<string, string> = {}): WebAnswer {
  return dataAnswer(status, 'application/json', JSON.stringify(body), headers)
}

/** Data of any type (JSON, an NDJSON export), never kept. */
export function dataAnswer(
  status: number,
  contentType: string,
  body: string,
  headers: Record<string, string> = {},
): WebAnswer {
  return {
    status,
    contentType,
    body,
    headers: { ...securityHeaders, 'cache-control': 'no-store', ...headers },
  }
}

/** What a failure is answered as (the admin API's wire errors). */
export function errorAnswer(err: unknown): WebAnswer {
  const { httpStatus, body, headers } = toWireError(err, 'admin')
  return jsonAnswer(httpStatus, body, headers)
}
