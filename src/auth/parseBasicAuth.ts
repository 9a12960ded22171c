import { Buffer } from 'node:buffer'

/** The user name and password of an `Authorization: Basic` header, or undefined for any other header. */
export function parseBasicAuth(
  authorization: string | undefined,
): { user: string; password: string } | undefined {
  if (authorization === undefined || !authorization.toLowerCase().startsWith('basic ')) return undefined
  const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString()
  const colon = decoded.indexOf(':')
  return colon === -1
    ? { user: decoded, password: '' }
    : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}
