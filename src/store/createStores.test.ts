import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { createStores } from './createStores.ts'
import { DatabaseInUseError } from './lockDatabaseFile.ts'

describe('createStores', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-stores-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('builds every store on one database, which answers until closed', async () => {
    const stores = await createStores({ sqlite: ':memory:' }, { exclusive: true })
    await stores.keys.setMeta('probe', 'yes')
    assert.equal(await stores.keys.getMeta('probe'), 'yes')
    assert.deepEqual(await stores.usage.queryUsage({ fromDay: '2000-01-01' }), [])
    assert.deepEqual(await stores.feeHistory.storedNumbers(1, 0, 10), [])
    assert.equal(await stores.ping(), true)
    await stores.close()
    assert.equal(await stores.ping(), false)
  })

  it('an exclusive opener holds the file until it closes; others work beside it', async () => {
    const file = join(dir, 'data', 'tollgate.db')
    const gateway = await createStores({ sqlite: file }, { exclusive: true })
    assert.equal(existsSync(`${file}.lock`), true)
    await assert.rejects(createStores({ sqlite: file }, { exclusive: true }), DatabaseInUseError)
    const cli = await createStores({ sqlite: file }, { exclusive: false })
    await cli.keys.setMeta('from', 'cli')
    assert.equal(await gateway.keys.getMeta('from'), 'cli')
    await cli.close()
    assert.equal(existsSync(`${file}.lock`), true)
    await gateway.close()
    assert.equal(existsSync(`${file}.lock`), false)
  })

  it('lets go of the lock when the database cannot be opened', async () => {
    // a folder where the file should be: SQLite cannot open it
    const file = join(dir, 'folder.db')
    mkdirSync(file)
    await assert.rejects(createStores({ sqlite: file }, { exclusive: true }))
    assert.equal(existsSync(`${file}.lock`), false)
  })
})
