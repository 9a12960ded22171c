import { type BrotliCompress, constants, createBrotliCompress, createGzip, type Gzip } from 'node:zlib'

export type CompressionOptions = { enabled: boolean; minBytes: number }

export type ContentEncoding = 'br' | 'gzip'

/**
 * The encoding for an answer of `bodyBytes`: brotli when the client accepts it (at quality 1 it is
 * both smaller and several times cheaper than gzip on JSON-RPC answers; bench/RESULTS.md), else gzip;
 * none for small answers, which would lose more to the work than they save on the wire.
 */
export function chooseEncoding(
  acceptEncoding: string | undefined,
  bodyBytes: number,
  options: CompressionOptions,
): ContentEncoding | undefined {
  if (!options.enabled || acceptEncoding === undefined || bodyBytes < options.minBytes) return undefined
  const accepted = parseAcceptEncoding(acceptEncoding)
  if (accepted.has('br')) return 'br'
  if (accepted.has('gzip')) return 'gzip'
  return undefined
}

/** A streaming compressor for the chosen encoding, tuned for throughput over the last few bytes. */
export function createCompressor(encoding: ContentEncoding): BrotliCompress | Gzip {
  return encoding === 'br'
    ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 1 } })
    : createGzip({ level: 1 })
}

/** The codings an `Accept-Encoding` header accepts (`q=0` refuses one; `*` accepts both). */
function parseAcceptEncoding(header: string): Set<string> {
  const accepted = new Set<string>()
  const refused = new Set<string>()
  for (const part of header.split(',')) {
    const [name = '', ...parameters] = part.split(';')
    const coding = name.trim().toLowerCase()
    const q = parameters.map((parameter) => parameter.trim()).find((parameter) => parameter.startsWith('q='))
    if (q !== undefined && Number(q.slice(2)) === 0) refused.add(coding)
    else accepted.add(coding)
  }
  if (accepted.has('*')) for (const coding of ['br', 'gzip']) if (!refused.has(coding)) accepted.add(coding)
  for (const coding of refused) accepted.delete(coding)
  return accepted
}
