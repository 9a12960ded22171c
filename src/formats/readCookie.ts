/**
 * The value of cookie `name` in a request's Cookie header (several headers are read as one), as the
 * browser sent it; undefined when it has none.
 */
export function readCookie(header: string | readonly string[] | undefined, name: string): string | undefined {
  const text = typeof header === 'string' || header === undefined ? header : header.join('; ')
  if (text === undefined) return undefined
  for (const part of text.split(';')) {
    const at = part.indexOf('=')
    if (at !== -1 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim()
  }
  return undefined
}
