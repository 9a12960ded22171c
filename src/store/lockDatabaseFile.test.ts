import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DatabaseInUseError, lockDatabaseFile } from './lockDatabaseFile.ts'

describe('lockDatabaseFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-lock-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('lets one gateway hold a database file at a time', () => {
    const file = join(dir, 'one', 'tollgate.db')
    const lock = lockDatabaseFile(file)
    assert.equal(readFileSync(`${file}.lock`, 'utf8'), String(process.pid))
    assert.throws(
      () => lockDatabaseFile(file),
      (err: Error) => {
        assert.ok(err instanceof DatabaseInUseError)
        assert.equal(err.message, `another tollgate (pid ${process.pid}) is using ${file}`)
        return true
      },
    )
    lock.release()
    assert.equal(existsSync(`${file}.lock`), false)
    lockDatabaseFile(file).release()
  })

  it('takes over the lock of a process that is gone', () => {
    const file = join(dir, 'stale.db')
    // a PID that was just in use and is not any more
    const gone = spawnSync(process.execPath, [
      '-e',
      'process.stdout.write(String(process.pid))',
    ]).stdout.toString()
    writeFileSync(`${file}.lock`, gone)
    const lock = lockDatabaseFile(file)
    assert.equal(readFileSync(`${file}.lock`, 'utf8'), String(process.pid))
    lock.release()
  })

  it('does not lock an in-memory database', () => {
    lockDatabaseFile(':memory:').release()
    lockDatabaseFile(':memory:').release()
  })
})
