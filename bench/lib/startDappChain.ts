import { type Address, encodeDeployData, encodeFunctionData, type Hash } from 'viem'
import { demoAbi, demoBytecode } from '../../src/devnet/contracts.ts'
import { createRandom } from '../../test/helpers/createRandom.ts'
import { resultOf } from './callRpc.ts'
import type { HeadWatcher } from './watchHeads.ts'

/** One dapp: its contracts (two Demo contracts: a counter and balances, each with its events). */
export type Dapp = { name: string; contracts: [Address, Address] }

export type DappChain = {
  dapps: Dapp[]
  /** The account of each simulated user (anvil's dev accounts after the keeper's). */
  users: Address[]
  /** The dapp user `user` uses. */
  dappOf(user: number): Dapp
  /** The keeper's latest transactions to a dapp, newest last (some not mined yet). */
  recentTransactions(dapp: Dapp): readonly Hash[]
  /** A deposit sent by `user` to its dapp, straight to the node (not through the gateway): its hash. */
  sendDeposit(user: number, tag: bigint): Promise<Hash>
  /** Stops sending transactions (the one under way finishes). */
  stop(): Promise<void>
}

const dappNames = ['swap', 'lend', 'mint']
const recentKept = 12

/**
 * Three dapps of two Demo contracts each, deployed on the node at `url` (anvil with interval mining and
 * a dev account for the keeper and each user), and a keeper that changes their storage and emits their
 * events in every block: on each new head, `increment()` on every contract (its counter and an
 * `Incremented` log) and `setBalance` of a user of each dapp (a `Deposited` log), chosen by `seed`.
 */
export async function startDappChain(
  url: string,
  watcher: HeadWatcher,
  { userCount, seed }: { userCount: number; seed: number },
): Promise<DappChain> {
  const accounts = (await resultOf(url, 'eth_accounts', [])) as Address[]
  const [keeper, ...users] = accounts.slice(0, userCount + 1) as [Address, ...Address[]]
  if (users.length < userCount) throw new Error(`the node has ${accounts.length} dev accounts`)
  const dapps = await deployDapps(url, keeper)
  const recent = new Map<Dapp, Hash[]>(dapps.map((dapp) => [dapp, []]))
  const dappOf = (user: number) => dapps[user % dapps.length] as Dapp
  const send = (from: Address, to: Address, data: Hash, value = 0n) =>
    resultOf(url, 'eth_sendTransaction', [
      { from, to, data, value: `0x${value.toString(16)}` },
    ]) as Promise<Hash>

  const random = createRandom(seed)
  let running: Promise<void> | undefined
  let stopped = false
  const changeEveryDapp = async () => {
    for (const dapp of dapps) {
      const sent = recent.get(dapp) as Hash[]
      for (const contract of dapp.contracts) sent.push(await send(keeper, contract, incrementData))
      const account = users[random.int(users.length)] as Address
      const data = encodeFunctionData({
        abi: demoAbi,
        functionName: 'setBalance',
        args: [account, BigInt(random.int(1_000_000))],
      })
      sent.push(await send(keeper, dapp.contracts[0], data))
      sent.splice(0, Math.max(0, sent.length - recentKept))
    }
  }
  watcher.onHead(() => {
    if (running !== undefined || stopped) return
    running = changeEveryDapp()
      .catch((error: Error) => {
        process.stderr.write(`keeper: ${error.message}\n`)
      })
      .finally(() => {
        running = undefined
      })
  })
  await changeEveryDapp()

  return {
    dapps,
    users,
    dappOf,
    recentTransactions: (dapp) => recent.get(dapp) ?? [],
    sendDeposit: (user, tag) =>
      send(
        users[user] as Address,
        dappOf(user).contracts[0],
        encodeFunctionData({ abi: demoAbi, functionName: 'deposit', args: [tag] }),
        1n,
      ),
    async stop() {
      stopped = true
      await running
    },
  }
}

const incrementData = encodeFunctionData({ abi: demoAbi, functionName: 'increment' })

/** Deploys two Demo contracts per dapp (all in one block) and waits for them to be mined. */
async function deployDapps(url: string, deployer: Address): Promise<Dapp[]> {
  const data = encodeDeployData({ abi: demoAbi, bytecode: demoBytecode, args: [7n] })
  const hashes: Hash[] = []
  for (let each = 0; each < dappNames.length * 2; each++)
    hashes.push((await resultOf(url, 'eth_sendTransaction', [{ from: deployer, data }])) as Hash)
  const addresses: Address[] = []
  for (const hash of hashes) addresses.push((await minedReceipt(url, hash)).contractAddress)
  return dappNames.map((name, index) => ({
    name,
    contracts: [addresses[index * 2], addresses[index * 2 + 1]] as [Address, Address],
  }))
}

async function minedReceipt(url: string, hash: Hash): Promise<{ contractAddress: Address }> {
  for (;;) {
    const receipt = await resultOf(url, 'eth_getTransactionReceipt', [hash])
    if (receipt !== null) return receipt as { contractAddress: Address }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
