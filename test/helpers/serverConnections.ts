import { execFileSync } from 'node:child_process'

/**
 * The established connections to `127.0.0.1:port` on this machine, by the client's port, with the
 * process holding the server's end (`ss`): which worker of a cluster serves which client socket.
 */
export function serverConnections(port: number): Map<number, number> {
  const out = execFileSync('ss', ['-tnpH', 'state', 'established', `( sport = :${port} )`], {
    encoding: 'utf8',
  })
  const connections = new Map<number, number>()
  for (const line of out.split('\n')) {
    const match = /:(\d+)\s+\S*:(\d+)\s+users:\(\("[^"]*",pid=(\d+)/.exec(line)
    if (match && Number(match[1]) === port) connections.set(Number(match[2]), Number(match[3]))
  }
  return connections
}
