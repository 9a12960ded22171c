import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import process from 'node:process'

/** Thrown when another running gateway holds the database file. */
export class DatabaseInUseError extends Error {
  override name = 'DatabaseInUseError'
}

export type DatabaseLock = { release(): void }

/**
 * Makes this process the one gateway on an SQLite file: `<file>.lock` holds its PID, created
 * exclusively. A lock whose process is gone (a crash, kill -9) is taken over. The CLI does not lock:
 * it edits keys beside a running gateway on purpose. Two gateways on one file would each count the
 * day's credits alone.
 */
export function lockDatabaseFile(file: string): DatabaseLock {
  if (file === ':memory:') return { release() {} }
  const lockFile = `${file}.lock`
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx', 0o600)
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return { release: () => rmSync(lockFile, { force: true }) }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw asInUse(err, file, lockFile)
      const text = readFileSync(lockFile, 'utf8')
      // empty: its holder is writing its PID this very moment
      const holder = Number(text)
      if (text === '' || isRunning(holder))
        throw new DatabaseInUseError(`another tollgate (pid ${text || '?'}) is using ${file}`)
      rmSync(lockFile, { force: true })
    }
  }
}

function isRunning(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: it runs, as another user
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function asInUse(err: unknown, file: string, lockFile: string): Error {
  if ((err as NodeJS.ErrnoException).code === 'EEXIST')
    return new DatabaseInUseError(`another tollgate is using ${file}`)
  return new Error(`cannot lock ${file} (${lockFile}): ${(err as Error).message}`)
}
