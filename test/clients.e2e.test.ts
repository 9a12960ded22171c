import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Contract, JsonRpcProvider, Network } from 'ethers'
import {
  type BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  encodeAbiParameters,
  encodeFunctionData,
  http,
  keccak256,
  type PublicClient,
  toHex,
} from 'viem'
import { foundry } from 'viem/chains'
import { demoAbi } from '../src/devnet/contracts.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'

/** Real clients (viem's public client, ethers' JsonRpcProvider) pointed at the gateway, reading a seeded devnet. */
describe('viem and ethers through the gateway', () => {
  let node: TestNode
  let gateway: TestGateway
  let viaGateway: PublicClient
  let viaNode: PublicClient
  let ethers: JsonRpcProvider

  before(async () => {
    node = await startTestNode()
    gateway = await startTestGateway({ upstreams: [node.url] })
    viaGateway = createPublicClient({ chain: foundry, transport: http(gateway.endpoint, { retryCount: 0 }) })
    viaNode = createPublicClient({ chain: foundry, transport: http(node.url, { retryCount: 0 }) })
    ethers = new JsonRpcProvider(gateway.endpoint, Network.from(31337), { staticNetwork: true })
  })

  after(async () => {
    ethers?.destroy()
    await gateway?.close()
    await node?.stop()
  })

  it('reads blocks with and without transactions (viem)', async () => {
    const receipt = await viaNode.getTransactionReceipt({ hash: node.fixtures.eip1559Tx })
    for (const includeTransactions of [false, true]) {
      const block = await viaGateway.getBlock({ blockNumber: receipt.blockNumber, includeTransactions })
      const expected = await viaNode.getBlock({ blockNumber: receipt.blockNumber, includeTransactions })
      assert.deepEqual(block, expected)
      assert.equal(block.transactions.length, 1)
      const [tx] = block.transactions
      if (includeTransactions) assert.equal(typeof tx === 'object' && tx.type, 'eip1559')
      else assert.equal(tx, node.fixtures.eip1559Tx)
    }
    const byHash = await viaGateway.getBlock({ blockHash: receipt.blockHash, includeTransactions: true })
    assert.equal(byHash.number, receipt.blockNumber)
  })

  it('reads blocks with and without transactions (ethers)', async () => {
    const receipt = await viaNode.getTransactionReceipt({ hash: node.fixtures.legacyTx })
    const block = await ethers.getBlock(Number(receipt.blockNumber), true)
    assert.ok(block)
    assert.equal(block.hash, receipt.blockHash)
    assert.equal(block.prefetchedTransactions[0]?.hash, node.fixtures.legacyTx)
    assert.equal(block.prefetchedTransactions[0]?.type, 0)
    const hashesOnly = await ethers.getBlock(receipt.blockHash, false)
    assert.deepEqual(hashesOnly?.transactions, [node.fixtures.legacyTx])
  })

  it('reads receipts of every transaction kind (viem and ethers)', async () => {
    const { fixtures } = node
    const legacy = await viaGateway.getTransactionReceipt({ hash: fixtures.legacyTx })
    assert.equal(legacy.type, 'legacy')
    assert.equal(legacy.logs.length, 1)
    const accessList = await viaGateway.getTransactionReceipt({ hash: fixtures.accessListTx })
    assert.equal(accessList.type, 'eip2930')
    const dynamic = await viaGateway.getTransactionReceipt({ hash: fixtures.eip1559Tx })
    assert.equal(dynamic.type, 'eip1559')
    const deploy = await viaGateway.getTransactionReceipt({ hash: fixtures.deployTx })
    assert.equal(deploy.contractAddress, fixtures.demo)
    const failed = await viaGateway.getTransactionReceipt({ hash: fixtures.failedTx })
    assert.equal(failed.status, 'reverted')

    const ethersReceipt = await ethers.getTransactionReceipt(fixtures.accessListTx)
    assert.equal(ethersReceipt?.type, 1)
    assert.equal(ethersReceipt?.status, 1)
    assert.equal((await ethers.getTransactionReceipt(fixtures.failedTx))?.status, 0)
  })

  it('reads block receipts', async () => {
    const { blockNumber } = await viaNode.getTransactionReceipt({ hash: node.fixtures.eip1559Tx })
    const receipts = await viaGateway.getBlockReceipts({ blockNumber })
    assert.deepEqual(receipts, await viaNode.getBlockReceipts({ blockNumber }))
    assert.equal(receipts[0]?.transactionHash, node.fixtures.eip1559Tx)
    const viaEthers = await ethers.send('eth_getBlockReceipts', [toHex(blockNumber)])
    assert.equal(viaEthers[0].transactionHash, node.fixtures.eip1559Tx)
  })

  it('reads the plain storage slot and the mapping slot (docs/compatibility.md §7)', async () => {
    const { demo, counterValue, mappingKey, mappingValue } = node.fixtures
    const plain = await viaGateway.getStorageAt({ address: demo, slot: '0x0' })
    assert.equal(BigInt(plain ?? 0), counterValue)
    // balances is at slot 1: keccak256(pad32(key) ++ pad32(1))
    const slot = keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [mappingKey, 1n]))
    const mapped = await viaGateway.getStorageAt({ address: demo, slot })
    assert.equal(BigInt(mapped ?? 0), mappingValue)
    assert.equal(BigInt(await ethers.getStorage(demo, slot)), mappingValue)
  })

  it('calls the contract, and both clients decode the revert reason and the custom error', async () => {
    const { demo, accounts } = node.fixtures
    const counter = await viaGateway.readContract({ address: demo, abi: demoAbi, functionName: 'counter' })
    assert.equal(counter, node.fixtures.counterValue)

    const reason = await viaGateway
      .readContract({ address: demo, abi: demoAbi, functionName: 'failWithReason' })
      .catch((err: unknown) => err)
    const reverted = (reason as BaseError).walk((err) => err instanceof ContractFunctionRevertedError)
    assert.ok(reverted instanceof ContractFunctionRevertedError)
    assert.equal(reverted.reason, 'Demo: not allowed')

    const custom = await viaGateway
      .readContract({
        address: demo,
        abi: demoAbi,
        functionName: 'failWithCustomError',
        account: accounts[1],
      })
      .catch((err: unknown) => err)
    const customRevert = (custom as BaseError).walk((err) => err instanceof ContractFunctionRevertedError)
    assert.ok(customRevert instanceof ContractFunctionRevertedError)
    assert.equal(customRevert.data?.errorName, 'NotAllowed')
    assert.deepEqual(customRevert.data?.args, [accounts[1], 42n])

    const contract = new Contract(demo, demoAbi, ethers)
    await assert.rejects(contract.getFunction('failWithReason').staticCall(), (err: { reason?: string }) => {
      assert.equal(err.reason, 'Demo: not allowed')
      return true
    })
    await assert.rejects(
      contract.getFunction('failWithCustomError').staticCall({ from: accounts[1] }),
      (err: { revert?: { name: string; args: unknown[] } }) => {
        assert.equal(err.revert?.name, 'NotAllowed')
        assert.equal(String(err.revert?.args[0]).toLowerCase(), accounts[1]?.toLowerCase())
        assert.equal(err.revert?.args[1], 42n)
        return true
      },
    )
  })

  it('creates an access list', async () => {
    const { demo, accounts } = node.fixtures
    const request = {
      account: accounts[2],
      to: demo,
      data: encodeFunctionData({ abi: demoAbi, functionName: 'increment' }),
    }
    const result = await viaGateway.createAccessList(request)
    assert.deepEqual(result, await viaNode.createAccessList(request))
    const entry = result.accessList.find((item) => item.address.toLowerCase() === demo.toLowerCase())
    assert.ok(entry?.storageKeys.includes(`0x${'0'.repeat(64)}`))
    assert.ok(result.gasUsed > 21_000n)
  })

  it('gets a proof of the account and its storage', async () => {
    const { demo } = node.fixtures
    const blockNumber = await viaNode.getBlockNumber()
    const storageKeys = [`0x${'0'.repeat(64)}`, `0x${'0'.repeat(63)}2`] as const
    const proof = await viaGateway.getProof({ address: demo, storageKeys: [...storageKeys], blockNumber })
    assert.deepEqual(
      proof,
      await viaNode.getProof({ address: demo, storageKeys: [...storageKeys], blockNumber }),
    )
    assert.equal(proof.storageProof[0]?.value, node.fixtures.counterValue)
    assert.ok(proof.accountProof.length > 0)
    const viaEthers = await ethers.send('eth_getProof', [demo, storageKeys, toHex(blockNumber)])
    assert.equal(viaEthers.storageHash, proof.storageHash)
  })
})
