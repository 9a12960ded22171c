import type { Buffer } from 'node:buffer'
import { createHash, timingSafeEqual } from 'node:crypto'
import { MetricsTokenRequiredError } from '../errors/httpErrors.ts'
import type { Metrics } from './createMetrics.ts'

export type MetricsRequest = { authorization: string | undefined }
export type MetricsResponse = { status: number; contentType: string; body: string }

export type MetricsDeps = {
  metrics: Metrics
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  token: string | undefined
}

/**
 * GET /metrics: the Prometheus text, behind the metrics token (compared in constant time) when one is
 * set; without it, MetricsTokenRequiredError (a JSON 401, like the route's 404 and 405).
 */
export async function handleMetrics(deps: MetricsDeps, request: MetricsRequest): Promise<MetricsResponse> {
  if (deps.token !== undefined && !tokenMatches(deps.token, request.authorization))
    throw new MetricsTokenRequiredError()
  return { status: 200, contentType: deps.metrics.contentType, body: await deps.metrics.render() }
}

function tokenMatches(token: string, authorization: string | undefined): boolean {
  if (authorization === undefined || !authorization.toLowerCase().startsWith('bearer ')) return false
  // equal-length digests: the comparison takes the same time whatever the given token's length
  return timingSafeEqual(digest(authorization.slice(7).trim()), digest(token))
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}
