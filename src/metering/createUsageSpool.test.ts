import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { storeBackends, type TestDatabase } from '../../test/helpers/storeBackends.ts'
import { createUsageBuffer } from './createUsageBuffer.ts'
import { createUsageSpool, newBatchId } from './createUsageSpool.ts'
import type { UsageDelta, UsageStore } from './usageStore.ts'

const delta = (keyId: number, calls: number): UsageDelta => ({
  daily: [
    { subject: `account:${keyId}`, day: '2026-06-01', credits: calls * 80 },
    { subject: `key:${keyId}`, day: '2026-06-01', credits: calls * 80 },
  ],
  hourly: [
    {
      keyId,
      network: 'devnet',
      method: 'eth_blockNumber',
      hour: '2026-06-01T10',
      calls,
      credits: calls * 80,
      failoverCalls: 0,
    },
  ],
})

for (const backend of storeBackends) {
  describe(`usage spool on ${backend.name}`, () => {
    let database: TestDatabase
    let store: UsageStore
    let dir: string
    before(async () => {
      database = await backend.createDatabase()
      store = (await database.open()).usage
      dir = mkdtempSync(join(tmpdir(), 'tollgate-spool-'))
    })
    after(async () => {
      await database?.remove()
      rmSync(dir, { recursive: true, force: true })
    })

    const creditsOf = async (keyId: number) => (await store.loadDailyUsage('2026-06-01')).get(`key:${keyId}`)

    it('a replay interrupted after the ledger write (before the file is removed) counts once', async () => {
      const spool = createUsageSpool({ dir: join(dir, 'a'), ledgerId: await store.getLedgerId() })
      spool.write(newBatchId(), delta(1, 3))
      spool.write(newBatchId(), delta(2, 5))
      // the process dies right after the first batch's transaction commits
      const dying = {
        ...store,
        async addBatch(batchId: string, batch: UsageDelta) {
          await store.addBatch(batchId, batch)
          throw new Error('killed')
        },
      }
      await assert.rejects(spool.replay(dying), /killed/)
      assert.equal(readdirSync(join(dir, 'a')).length, 2, 'both files are still there')
      const ledgerAfterCrash = [await creditsOf(1), await creditsOf(2)]
      assert.equal(ledgerAfterCrash.filter((credits) => credits !== undefined).length, 1)

      const replay = await spool.replay(store)
      assert.deepEqual(replay, {
        added: 1,
        skipped: 1,
        calls: ledgerAfterCrash[0] === undefined ? 3 : 5,
        credits: (ledgerAfterCrash[0] === undefined ? 3 : 5) * 80,
      })
      assert.deepEqual([await creditsOf(1), await creditsOf(2)], [3 * 80, 5 * 80])
      assert.deepEqual(readdirSync(join(dir, 'a')), [])
      assert.deepEqual(await spool.replay(store), { added: 0, skipped: 0, calls: 0, credits: 0 })
      assert.deepEqual([await creditsOf(1), await creditsOf(2)], [3 * 80, 5 * 80])
    })

    it("replays only its own ledger's files; leaves a broken file and says which", async () => {
      const spoolDir = join(dir, 'b')
      const other = createUsageSpool({ dir: spoolDir, ledgerId: 'another0ledger' })
      other.write(newBatchId(), delta(3, 1))
      const spool = createUsageSpool({ dir: spoolDir, ledgerId: await store.getLedgerId() })
      assert.deepEqual(await spool.replay(store), { added: 0, skipped: 0, calls: 0, credits: 0 })
      assert.equal(await creditsOf(3), undefined)
      const broken = join(spoolDir, `usage-${await store.getLedgerId()}-broken.json`)
      writeFileSync(broken, '{"ledgerId":')
      await assert.rejects(spool.replay(store), (err: Error) => err.message.includes(broken))
      assert.equal(readdirSync(spoolDir).length, 2)
    })

    it('the last flush, with the store away, is spooled (0600, directory 0700) and added once later', async () => {
      const spoolDir = join(dir, 'c', 'spool')
      const written: { file: string; calls: number; credits: number }[] = []
      const spool = createUsageSpool({
        dir: spoolDir,
        ledgerId: await store.getLedgerId(),
        onWrite: ({ file, calls, credits }) => written.push({ file, calls, credits }),
      })
      const away = { ...store, addBatch: () => Promise.reject(new Error('database away')) }
      const buffer = createUsageBuffer(away, { spool })
      for (let i = 0; i < 4; i++) {
        buffer.addCall({
          keyId: 4,
          network: 'devnet',
          method: 'eth_call',
          hour: '2026-06-01T11',
          credits: 80,
          failover: false,
        })
        buffer.addCredits('key:4', '2026-06-01', 80)
      }
      const file = await buffer.close()
      assert.deepEqual(written, [{ file, calls: 4, credits: 320 }])
      assert.equal(statSync(file ?? '').mode & 0o777, 0o600)
      assert.equal(statSync(spoolDir).mode & 0o777, 0o700)
      assert.equal(await creditsOf(4), undefined)
      assert.equal((await spool.replay(store)).added, 1)
      assert.equal(await creditsOf(4), 320)
    })

    it('a last flush that answers too late is spooled under its batch id: the late write and the replay count once', async () => {
      const spool = createUsageSpool({ dir: join(dir, 'd'), ledgerId: await store.getLedgerId() })
      let land: () => void = () => {}
      const landed = new Promise<void>((resolve) => {
        land = resolve
      })
      let late: Promise<boolean> | undefined
      const slow = {
        ...store,
        addBatch(batchId: string, batch: UsageDelta) {
          // the write reaches the database only after the buffer gave up on it
          late = landed.then(() => store.addBatch(batchId, batch))
          return late
        },
      }
      const buffer = createUsageBuffer(slow, { spool, closeWriteMs: 1 })
      buffer.addCall({
        keyId: 5,
        network: 'devnet',
        method: 'eth_call',
        hour: '2026-06-01T12',
        credits: 80,
        failover: false,
      })
      buffer.addCredits('key:5', '2026-06-01', 80)
      assert.ok(await buffer.close(), 'spooled')
      land()
      assert.equal(await late, true)
      assert.deepEqual(await spool.replay(store), { added: 0, skipped: 1, calls: 0, credits: 0 })
      assert.equal(await creditsOf(5), 80)
    })
  })
}

describe('createUsageBuffer.close', () => {
  it('with the store and the spool both failing, keeps the usage and says both', async () => {
    const away = {
      addBatch: () => Promise.reject(new Error('database away')),
      addUsage: () => Promise.resolve(),
    } as unknown as UsageStore
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-spool-'))
    // a file where the spool's directory should be: it cannot be written
    writeFileSync(join(dir, 'file'), '')
    const spool = createUsageSpool({ dir: join(dir, 'file', 'spool'), ledgerId: 'x' })
    const buffer = createUsageBuffer(away, { spool })
    buffer.addCredits('key:6', '2026-06-01', 80)
    await assert.rejects(buffer.close(), (err: AggregateError) => err.errors.length === 2)
    // still pending: a later flush writes it
    assert.deepEqual(await buffer.flush(), [{ subject: 'key:6', day: '2026-06-01', credits: 80 }])
    rmSync(dir, { recursive: true, force: true })
  })
})
