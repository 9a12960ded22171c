import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { createStores } from '../app/createStores.ts'
import { openSqlite } from './openSqlite.ts'

const modeOf = (path: string) => statSync(path).mode & 0o777

describe('openSqlite: file modes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-modes-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('creates the data directory 0700, the database, its -wal, -shm and lock 0600', async () => {
    const file = join(dir, 'made', 'here', 'tollgate.db')
    const warnings: string[] = []
    const stores = await createStores(
      { sqlite: file },
      { exclusive: true, onWarning: (m) => warnings.push(m) },
    )
    try {
      // a write, so the -wal and -shm files exist
      await stores.usage.addUsage({
        daily: [{ subject: 'key:1', day: '2026-01-01', credits: 1 }],
        hourly: [],
      })
      assert.equal(modeOf(join(dir, 'made')), 0o700)
      assert.equal(modeOf(join(dir, 'made', 'here')), 0o700)
      for (const path of [file, `${file}-wal`, `${file}-shm`, `${file}.lock`]) {
        assert.ok(existsSync(path), path)
        assert.equal(modeOf(path), 0o600, path)
      }
      assert.deepEqual(warnings, [])
    } finally {
      await stores.close()
    }
  })

  it('tightens an existing database (and -wal, -shm) others could read, with a warning; leaves its directory', () => {
    const file = join(dir, 'old.db')
    openSqlite(file).close()
    chmodSync(dir, 0o755)
    chmodSync(file, 0o644)
    const warnings: string[] = []
    const db = openSqlite(file, { onWarning: (message) => warnings.push(message) })
    db.close()
    assert.equal(modeOf(file), 0o600)
    assert.equal(modeOf(dir), 0o755)
    assert.deepEqual(warnings, [`${file} was readable by others (mode 0644): now 0600`])
    const again: string[] = []
    openSqlite(file, { onWarning: (message) => again.push(message) }).close()
    assert.deepEqual(again, [], 'nothing more to say')
  })
})
