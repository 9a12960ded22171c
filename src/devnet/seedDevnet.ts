import {
  type Address,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  type Hash,
  http,
  parseEther,
  parseGwei,
  publicActions,
} from 'viem'
import { foundry } from 'viem/chains'
import { demoAbi, demoBytecode } from './contracts.ts'

/** What the seeding made, for the start banner and for tests. */
export type DevnetFixtures = {
  /** anvil's default dev accounts (unlocked on the node, never on the gateway). */
  accounts: Address[]
  demo: Address
  deployTx: Hash
  legacyTx: Hash
  accessListTx: Hash
  eip1559Tx: Hash
  /** A transaction that was mined and failed (status 0). */
  failedTx: Hash
  /** The account whose `balances` mapping entry was set, and the value set. */
  mappingKey: Address
  mappingValue: bigint
  /** `counter` (slot 0) after seeding. */
  counterValue: bigint
  /** First and last block of the varying-load run. */
  loadBlocks: { from: bigint; to: bigint }
}

export type SeedOptions = {
  /** Blocks of varying gas use to mine, so base fees move (default 300). */
  loadBlocks?: number
  /** PRNG seed: the same seed gives the same chain. */
  seed?: number
  /** Whose test methods mine and switch automine: `anvil_*` (the default) or `hardhat_*` (Hardhat's node). */
  testMode?: 'anvil' | 'hardhat'
  /**
   * The node's gas cap per transaction (EIP-7825's 2^24 on Hardhat 3): a load block's gas is then spread over
   * enough transactions that none passes it. None by default, and the chain is the same as without it.
   */
  maxTxGas?: number
}

/**
 * Seeds a fresh anvil with viem so every core method (docs/compatibility.md §2) has something real to return: the Demo
 * contract (plain slot, mapping, events, reverts), legacy / EIP-2930 / EIP-1559 transactions, a
 * failed transaction, then blocks of varying load so base fees and tips move.
 */
export async function seedDevnet(url: string, options: SeedOptions = {}): Promise<DevnetFixtures> {
  const transport = http(url, { batch: { batchSize: 100, wait: 0 }, retryCount: 0 })
  const wallet = createWalletClient({ chain: foundry, transport, cacheTime: 0 }).extend(publicActions)
  const test = createTestClient({ chain: foundry, mode: options.testMode ?? 'anvil', transport })
  const accounts = await wallet.getAddresses()
  const [deployer, alice, bob] = accounts as [Address, Address, Address, ...Address[]]

  await test.setAutomine(true)
  const deployTx = await wallet.deployContract({
    abi: demoAbi,
    bytecode: demoBytecode,
    args: [7n],
    account: deployer,
  })
  const deployReceipt = await wallet.waitForTransactionReceipt({ hash: deployTx })
  const demo = deployReceipt.contractAddress as Address

  const legacyTx = await wallet.sendTransaction({
    account: alice,
    to: demo,
    data: encodeFunctionData({ abi: demoAbi, functionName: 'increment' }),
    type: 'legacy',
    gasPrice: parseGwei('3'),
  })
  const accessListTx = await wallet.sendTransaction({
    account: bob,
    to: demo,
    data: encodeFunctionData({ abi: demoAbi, functionName: 'increment' }),
    type: 'eip2930',
    gasPrice: parseGwei('3'),
    accessList: [{ address: demo, storageKeys: [`0x${'0'.repeat(64)}`] }],
  })
  const eip1559Tx = await wallet.sendTransaction({
    account: alice,
    to: demo,
    value: parseEther('1.5'),
    data: encodeFunctionData({ abi: demoAbi, functionName: 'deposit', args: [42n] }),
    type: 'eip1559',
    maxFeePerGas: parseGwei('50'),
    maxPriorityFeePerGas: parseGwei('2'),
  })
  const mappingValue = 123_456_789n
  const mappingKey = bob
  await wallet.writeContract({
    account: deployer,
    address: demo,
    abi: demoAbi,
    functionName: 'setBalance',
    args: [mappingKey, mappingValue],
  })
  // explicit gas, so the node mines it instead of refusing it at estimation: status 0. Sent with
  // automine off, as a node that runs a send at once (Hardhat) answers a reverting one with the revert.
  await test.setAutomine(false)
  const failedTx = await wallet.sendTransaction({
    account: deployer,
    to: demo,
    data: encodeFunctionData({ abi: demoAbi, functionName: 'failWithReason' }),
    gas: 100_000n,
  })
  await test.mine({ blocks: 1 })
  await test.setAutomine(true)
  await wallet.waitForTransactionReceipt({ hash: failedTx })

  const loadBlocks = options.loadBlocks ?? 300
  const senders = accounts.slice(3, 8)
  await mineLoadBlocks({
    wallet,
    test,
    demo,
    senders,
    blocks: loadBlocks,
    seed: options.seed ?? 1,
    maxTxGas: options.maxTxGas ?? Number.POSITIVE_INFINITY,
  })
  const to = await wallet.getBlockNumber()
  const from = to - BigInt(loadBlocks) + 1n

  const counterValue = await wallet.readContract({ address: demo, abi: demoAbi, functionName: 'counter' })
  return {
    accounts,
    demo,
    deployTx,
    legacyTx,
    accessListTx,
    eip1559Tx,
    failedTx,
    mappingKey,
    mappingValue,
    counterValue,
    loadBlocks: { from, to },
  }
}

type LoadOptions = {
  wallet: ReturnType<typeof createWalletClient>
  test: ReturnType<typeof createTestClient>
  demo: Address
  senders: Address[]
  blocks: number
  seed: number
  maxTxGas: number
}

const maxBlockLoadGas = 29_000_000
/** Intrinsic gas, calldata and the call around the memory expansion. */
const txOverheadGas = 30_000

/** Memory words whose expansion costs about `gas` (3w + w*w/512). */
function wordsForGas(gas: number): number {
  return Math.max(1, Math.floor(-768 + Math.sqrt(768 * 768 + 512 * gas)))
}

/**
 * Mines `blocks` blocks whose gas use is drawn uniformly from 0 to ~29M (target 15M), split over
 * 1-4 transactions (more where the node caps a transaction's gas) with tips from 0.1 to 3 gwei, so base
 * fees walk up and down.
 */
async function mineLoadBlocks({
  wallet,
  test,
  demo,
  senders,
  blocks,
  seed,
  maxTxGas,
}: LoadOptions): Promise<void> {
  const random = createRandom(seed)
  const nonces = await Promise.all(
    senders.map((address) =>
      wallet.request({ method: 'eth_getTransactionCount', params: [address, 'pending'] }),
    ),
  ).then((counts) => counts.map((count) => Number(count)))
  const burn = (sender: number, gas: number, tipWei: bigint) => {
    const nonce = nonces[sender] as number
    nonces[sender] = nonce + 1
    return wallet.request({
      method: 'eth_sendTransaction',
      params: [
        {
          from: senders[sender] as Address,
          to: demo,
          data: encodeFunctionData({ abi: demoAbi, functionName: 'burn', args: [BigInt(wordsForGas(gas))] }),
          gas: `0x${(gas + txOverheadGas).toString(16)}`,
          maxFeePerGas: `0x${parseGwei('500').toString(16)}`,
          maxPriorityFeePerGas: `0x${tipWei.toString(16)}`,
          nonce: `0x${nonce.toString(16)}`,
        },
      ],
    })
  }

  await test.setAutomine(false)
  try {
    for (let block = 0; block < blocks; block++) {
      const loadGas = Math.floor(random() * maxBlockLoadGas)
      const drawn = loadGas < 500_000 ? 0 : 1 + Math.floor(random() * 4)
      const count = drawn === 0 ? 0 : Math.max(drawn, Math.ceil(loadGas / (maxTxGas - txOverheadGas)))
      const sends: Promise<unknown>[] = []
      for (let index = 0; index < count; index++) {
        const tipWei = BigInt(Math.floor((0.1 + random() * 2.9) * 1e9))
        sends.push(burn(index % senders.length, Math.floor(loadGas / count) - txOverheadGas, tipWei))
      }
      await Promise.all(sends)
      await test.mine({ blocks: 1 })
    }
  } finally {
    await test.setAutomine(true)
  }
}

/** mulberry32: a small seeded PRNG, so a seed always gives the same chain. */
function createRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
