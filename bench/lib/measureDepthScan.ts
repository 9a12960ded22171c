import { isJsonDeeperThan } from '../../src/jsonrpc/isJsonDeeperThan.ts'

/** The depth scan (src/jsonrpc/isJsonDeeperThan.ts) against JSON.parse, on the bodies it sees. */
export function measureDepthScan(maxJsonDepth: number, maxBodyBytes: number): string {
  const small = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'eth_call',
    params: [{ to: `0x${'1'.repeat(40)}`, data: `0x70a08231${'0'.repeat(64)}` }, 'latest'],
  })
  const large = (fill: (bytes: number) => unknown) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_sendRawTransaction',
      params: [fill(maxBodyBytes - 100)],
    })
  const bodies: [string, string][] = [
    ['a raw transaction of 5 MiB (one hex string)', large((bytes) => `0x${'ab'.repeat(bytes / 2 - 1)}`)],
    [
      'a 5 MiB batch-like array (dense with brackets)',
      JSON.stringify(
        Array.from({ length: Math.floor(maxBodyBytes / 70) }, (_, id) => ({
          jsonrpc: '2.0',
          id,
          method: 'eth_chainId',
          params: [[1]],
        })),
      ),
    ],
    ['5 MiB of escaped quotes (`\\"` over and over)', large((bytes) => '"'.repeat(bytes / 2))],
    ['5 MiB of backslashes in one string', large((bytes) => '\\'.repeat(bytes / 2))],
  ]
  const time = (run: () => unknown, rounds: number) => {
    const runs: number[] = []
    for (let round = 0; round < 5; round++) {
      const start = process.hrtime.bigint()
      for (let count = 0; count < rounds; count++) run()
      runs.push(Number(process.hrtime.bigint() - start) / rounds)
    }
    return runs.sort((a, b) => a - b)[2] as number
  }
  const rows = [
    '| body | bytes | depth scan | JSON.parse | scan / parse |',
    '|---|---|---|---|---|',
    (() => {
      const scanNs = time(() => isJsonDeeperThan(small, maxJsonDepth), 200_000)
      const parseNs = time(() => JSON.parse(small), 200_000)
      return `| an eth_call | ${small.length} | ${scanNs.toFixed(0)} ns | ${parseNs.toFixed(0)} ns | ${Math.round((scanNs / parseNs) * 100)}% |`
    })(),
    ...bodies.map(([name, body]) => {
      const scanNs = time(() => isJsonDeeperThan(body, maxJsonDepth), 4)
      const parseNs = time(() => JSON.parse(body), 4)
      return `| ${name} | ${body.length.toLocaleString('en-US')} | ${(scanNs / 1e6).toFixed(2)} ms | ${(parseNs / 1e6).toFixed(2)} ms | ${Math.round((scanNs / parseNs) * 100)}% |`
    }),
  ]
  return rows.join('\n')
}
