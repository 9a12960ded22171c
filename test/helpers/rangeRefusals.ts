/**
 * eth_getLogs range refusals as each vendor and node client words them (src/upstreams/nodeErrors.ts
 * names the sources). `refusal(from, to, limit)` is the error for a query of blocks `from`..`to` that
 * a node answering at most `limit` blocks refuses; `status` is the HTTP status it comes with, where
 * the vendor sends one other than 200; `stated` is the width the refusal says (undefined: halving).
 */
export type RangeRefusal = {
  vendor: string
  status?: number
  refusal(from: bigint, to: bigint, limit: bigint): { code: number; message: string }
  stated: 'limit' | 'suggested' | undefined
}

const hex = (value: bigint) => `0x${value.toString(16)}`
const grouped = (value: bigint) => value.toLocaleString('en-US')

export const rangeRefusals: readonly RangeRefusal[] = [
  {
    vendor: 'dRPC',
    refusal: (_from, _to, limit) => ({
      code: 35,
      message: `ranges over ${limit} blocks are not supported on freetier`,
    }),
    stated: 'limit',
  },
  {
    vendor: 'Infura (suggested range)',
    refusal: (from, _to, limit) => ({
      code: -32005,
      message: `query returned more than 10000 results. Try with this block range [${hex(from)}, ${hex(from + limit - 1n)}].`,
    }),
    stated: 'suggested',
  },
  {
    vendor: 'Infura (range limit)',
    refusal: (from, to, limit) => ({
      code: -32602,
      message: `range ${to - from} exceeds limit of ${limit}`,
    }),
    stated: 'limit',
  },
  {
    vendor: 'Alchemy',
    refusal: (from, _to, limit) => ({
      code: -32600,
      message: `You can make eth_getLogs requests with up to a ${limit} block range. Based on your parameters, this block range should work: [${hex(from)}, ${hex(from + limit - 1n)}]`,
    }),
    stated: 'suggested',
  },
  {
    vendor: 'QuickNode (HTTP 413)',
    status: 413,
    refusal: (_from, _to, limit) => ({
      code: -32614,
      message: `eth_getLogs is limited to a ${grouped(limit)} range`,
    }),
    stated: 'limit',
  },
  {
    vendor: 'Ankr',
    refusal: (_from, _to, limit) => ({
      code: -32600,
      message: `maximum [from, to] blocks distance: ${limit}`,
    }),
    stated: 'limit',
  },
  {
    vendor: 'Chainstack (HTTP 400)',
    status: 400,
    refusal: () => ({ code: -32602, message: 'Block range limit exceeded.' }),
    stated: undefined,
  },
  {
    vendor: 'Cloudflare',
    refusal: (_from, _to, limit) => ({
      code: -32047,
      message: `Invalid eth_getLogs request. 'fromBlock'-'toBlock' range too large. Max range: ${limit}`,
    }),
    stated: 'limit',
  },
  {
    vendor: 'LlamaRPC, reth (results)',
    refusal: (from, to) => ({
      code: -32602,
      message: `query exceeds max results 20000, retry with the range ${from}-${from + (to - from) / 2n}`,
    }),
    stated: 'suggested',
  },
  {
    vendor: 'reth (range)',
    refusal: (_from, _to, limit) => ({ code: -32602, message: `query exceeds max block range ${limit}` }),
    stated: 'limit',
  },
  {
    vendor: 'geth --rpc.rangelimit, PublicNode',
    refusal: (_from, _to, limit) => ({ code: -32701, message: `exceed maximum block range: ${limit}` }),
    stated: 'limit',
  },
  {
    vendor: 'erigon',
    refusal: (_from, _to, limit) => ({
      code: -32000,
      message: `query block range exceeds server limit, narrow your filter: ${limit}`,
    }),
    stated: 'limit',
  },
  {
    vendor: 'besu (HTTP 400)',
    status: 400,
    refusal: () => ({ code: -32005, message: 'Requested range exceeds maximum RPC range limit' }),
    stated: undefined,
  },
  {
    vendor: 'proxyd (HTTP 400)',
    status: 400,
    refusal: (_from, _to, limit) => ({ code: -32602, message: `block range greater than ${limit} max` }),
    stated: 'limit',
  },
  {
    vendor: 'Blast',
    refusal: (from, to, limit) => ({
      code: -32602,
      message: `eth_getLogs range exceeds the range allowed for your plan (${to - from + 1n} > ${limit})`,
    }),
    stated: 'limit',
  },
]
