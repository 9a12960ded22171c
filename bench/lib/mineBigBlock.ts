import { type Address, createPublicClient, createTestClient, createWalletClient, http, parseGwei } from 'viem'
import { foundry } from 'viem/chains'

/**
 * Mines one block holding `count` plain transfers (about 500 bytes each with full transaction
 * objects), the node-bound case: eth_getBlockByNumber with full transactions is slow on the node.
 */
export async function mineBigBlock(url: string, senders: Address[], count = 600): Promise<bigint> {
  const transport = http(url, { batch: { batchSize: 200, wait: 0 }, retryCount: 0 })
  const wallet = createWalletClient({ chain: foundry, transport })
  const reader = createPublicClient({ chain: foundry, transport, cacheTime: 0 })
  const test = createTestClient({ chain: foundry, mode: 'anvil', transport })
  const nonces = await Promise.all(
    senders.map(async (address) => reader.getTransactionCount({ address, blockTag: 'pending' })),
  )
  await test.setAutomine(false)
  try {
    await Promise.all(
      Array.from({ length: count }, (_, index) => {
        const sender = index % senders.length
        const nonce = (nonces[sender] as number) + Math.floor(index / senders.length)
        return wallet.request({
          method: 'eth_sendTransaction',
          params: [
            {
              from: senders[sender] as Address,
              to: senders[(sender + 1) % senders.length] as Address,
              value: `0x${(index + 1).toString(16)}`,
              gas: '0x5208',
              maxFeePerGas: `0x${parseGwei('500').toString(16)}`,
              maxPriorityFeePerGas: '0x1',
              nonce: `0x${nonce.toString(16)}`,
            },
          ],
        })
      }),
    )
    await test.mine({ blocks: 1 })
  } finally {
    await test.setAutomine(true)
  }
  return reader.getBlockNumber()
}
