// The admin API's request and answer, apart from its handlers (handleAdmin and the files it routes to import them).

export type AdminRequest = {
  method: string
  url: string
  authorization: string | undefined
  body: string
  /** Whom wrong tokens are counted against (undefined: the dashboard's own calls, signed in). */
  clientAddress: string | undefined
}
export type AdminResponse = {
  status: number
  body: unknown
  headers?: Record<string, string>
  /** Set when `body` is text of this type (an NDJSON export), not JSON to serialize. */
  contentType?: string
}
