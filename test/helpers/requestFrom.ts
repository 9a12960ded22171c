import { type Agent, type IncomingHttpHeaders, request } from 'node:http'

export type PlainResponse = { status: number; headers: IncomingHttpHeaders; text: string; json: unknown }

export type RequestFromOptions = {
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  /** The client's own address: any of 127.0.0.0/8 works on Linux, so tests can be several clients. */
  localAddress?: string
  /** Keep-alive connections to reuse (its own `localAddress` then applies). */
  agent?: Agent
}

/** One HTTP request with node:http (lighter than fetch when a test sends thousands), from a chosen address. */
export function requestFrom(url: string, options: RequestFromOptions = {}): Promise<PlainResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'POST',
        headers: options.headers,
        ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
        ...(options.agent === undefined ? {} : { agent: options.agent }),
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('error', reject)
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString()
          let json: unknown
          try {
            json = text === '' ? undefined : JSON.parse(text)
          } catch {
            json = undefined
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
        })
      },
    )
    req.on('error', reject)
    req.end(options.body)
  })
}
