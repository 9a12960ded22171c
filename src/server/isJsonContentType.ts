const acceptedContentTypes = new Set(['application/json', 'application/json-rpc', 'application/jsonrequest'])

/** A Content-Type header a JSON-RPC body may come with (parameters such as `charset` aside); none is not one. */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false
  if (header === 'application/json') return true
  const semicolon = header.indexOf(';')
  const type = (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase()
  return acceptedContentTypes.has(type)
}
