/** The block gas limit a node needs for mineWideBlock's transactions (anvil's `--gas-limit`). */
export const wideBlockGasLimit = 200_000_000

/** Calldata of each transaction: 128 KiB of zeros, a 256 KiB hex string in the block's JSON. */
const inputBytes = 128 * 1024

/**
 * Mines one block on the anvil at `url` (started with `--gas-limit` wideBlockGasLimit) whose
 * eth_getBlockByNumber answer with full transactions holds at least `answerBytes`: transfers
 * between its dev accounts, each carrying inputBytes of calldata. Resolves with the block's number
 * (hex).
 */
export async function mineWideBlock(url: string, answerBytes: number): Promise<string> {
  const accounts = (await call<string[]>(url, 'eth_accounts', [])).slice(0, 10)
  const input = `0x${'00'.repeat(inputBytes)}`
  await call(url, 'evm_setAutomine', [false])
  try {
    for (let index = 0; index * 2 * inputBytes < answerBytes; index++) {
      const from = accounts[index % accounts.length]
      const to = accounts[(index + 1) % accounts.length]
      await call(url, 'eth_sendTransaction', [{ from, to, data: input }])
    }
    await call(url, 'evm_mine', [])
  } finally {
    await call(url, 'evm_setAutomine', [true])
  }
  return call<string>(url, 'eth_blockNumber', [])
}

async function call<T = unknown>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const answer = (await response.json()) as { result?: T; error?: { message: string } }
  if (answer.error) throw new Error(`${method}: ${answer.error.message}`)
  return answer.result as T
}
