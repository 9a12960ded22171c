import { encodeFunctionData } from 'viem'
import { demoAbi } from '../../src/devnet/contracts.ts'
import type { DevnetFixtures } from '../../src/devnet/seedDevnet.ts'

export type BenchCall = { name: string; method: string; params: unknown[] }

/** The cheap calls every bench measures (the gateway, not the node, is their limit), on a seeded devnet. */
export function cheapCalls(fixtures: DevnetFixtures): BenchCall[] {
  return [
    { name: 'eth_blockNumber', method: 'eth_blockNumber', params: [] },
    {
      name: 'eth_call',
      method: 'eth_call',
      params: [
        { to: fixtures.demo, data: encodeFunctionData({ abi: demoAbi, functionName: 'counter' }) },
        'latest',
      ],
    },
    { name: 'eth_getTransactionReceipt', method: 'eth_getTransactionReceipt', params: [fixtures.eip1559Tx] },
  ]
}
