import { createServer } from 'node:net'

/** Thrown when the listen address is taken. */
export class PortInUseError extends Error {
  override name = 'PortInUseError'
}

/**
 * Checks that `port` can be listened on before anything else starts (a second `tollgate start` must
 * not seed a devnet or touch a database only to fail at the end). Port 0 is always free.
 */
export function assertPortFree(port: number, host: string): Promise<void> {
  if (port === 0) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') reject(new PortInUseError(`port ${port} is in use`))
      else if (err.code === 'EACCES')
        reject(new PortInUseError(`port ${port} needs privileges this user lacks`))
      else reject(err)
    })
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()))
  })
}
