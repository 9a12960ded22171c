/**
 * An upstream URL safe to print: scheme, host and port only. Credentials and paths (where vendors
 * put API keys, e.g. /v3/<key>) are replaced, so logs and errors never carry them.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    const hidden = parsed.username !== '' || parsed.password !== '' || parsed.search !== ''
    const path = parsed.pathname === '/' || parsed.pathname === '' ? '' : '/…'
    return `${parsed.protocol}//${hidden ? '…@' : ''}${parsed.host}${path}`
  } catch {
    return '(invalid url)'
  }
}
