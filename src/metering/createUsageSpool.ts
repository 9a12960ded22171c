import { randomUUID } from 'node:crypto'
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'
import type { DailyUsage, HourlyUsage, UsageDelta, UsageStore } from './usageStore.ts'

/** One batch as kept in its file. */
type SpoolFile = { ledgerId: string; batchId: string; daily: DailyUsage[]; hourly: HourlyUsage[] }

/** What a replay added to the ledger (batches found recorded already count as skipped). */
export type SpoolReplay = { added: number; skipped: number; calls: number; credits: number }

export type UsageSpool = {
  /** Where the spool files are. */
  dir: string
  /**
   * Keeps one batch in a file of its own (0600; the directory 0700 when made here), written whole
   * or not at all (a temporary file renamed); answers the file.
   */
  write(batchId: string, delta: UsageDelta, cause?: unknown): string
  /**
   * Adds every batch spooled for this ledger to `store`, each once (UsageStore.addBatch), removing
   * each file after its batch is in; stops at the first batch the store refuses (the rest stay).
   */
  replay(store: UsageStore): Promise<SpoolReplay>
}

const prefix = 'usage-'

/**
 * Usage the database did not take when the gateway stopped, kept on local disk until a start adds it
 * (docs/operations.md, Usage ledger). Files are named `usage-<ledgerId>-<batchId>.json`: a spool is
 * replayed only into the ledger it was written for, and a batch added twice (a crash between the
 * ledger's commit and the file's removal) counts once, by its id.
 */
export function createUsageSpool(options: {
  dir: string
  ledgerId: string
  /** A batch was kept in `file` (the store refused it with `cause`): the stop logs it. */
  onWrite?: (written: { file: string; calls: number; credits: number; cause: unknown }) => void
}): UsageSpool {
  const { dir, ledgerId, onWrite } = options
  const own = `${prefix}${ledgerId}-`
  return {
    dir,
    write(batchId, delta, cause) {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      const file = join(dir, `${own}${batchId}.json`)
      const partial = `${file}.partial`
      const body: SpoolFile = { ledgerId, batchId, daily: delta.daily, hourly: delta.hourly }
      const fd = openSync(partial, 'w', 0o600)
      try {
        writeSync(fd, JSON.stringify(body))
        fsyncSync(fd)
      } finally {
        closeSync(fd)
      }
      renameSync(partial, file)
      onWrite?.({ file, ...totalsOf(delta), cause })
      return file
    },
    async replay(store) {
      const result: SpoolReplay = { added: 0, skipped: 0, calls: 0, credits: 0 }
      let names: string[]
      try {
        names = readdirSync(dir)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return result
        throw err
      }
      for (const name of names.filter((each) => each.startsWith(own) && each.endsWith('.json')).sort()) {
        const file = join(dir, name)
        const batch = parseSpoolFile(readFileSync(file, 'utf8'), file)
        if (batch.ledgerId !== ledgerId) throw new Error(`${file} belongs to another ledger`)
        if (await store.addBatch(batch.batchId, batch)) {
          const totals = totalsOf(batch)
          result.added += 1
          result.calls += totals.calls
          result.credits += totals.credits
        } else result.skipped += 1
        rmSync(file, { force: true })
      }
      return result
    },
  }
}

function totalsOf(delta: UsageDelta): { calls: number; credits: number } {
  let calls = 0
  let credits = 0
  for (const row of delta.hourly) {
    calls += row.calls
    credits += row.credits
  }
  return { calls, credits }
}

/** A fresh batch id. */
export const newBatchId = (): string => randomUUID()

function parseSpoolFile(text: string, file: string): SpoolFile {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new Error(`${file} is not a usage spool file (not JSON)`)
  }
  const body = parsed as Partial<SpoolFile> | null
  const wellFormed =
    typeof body === 'object' &&
    body !== null &&
    typeof body.ledgerId === 'string' &&
    typeof body.batchId === 'string' &&
    Array.isArray(body.daily) &&
    body.daily.every(isDailyUsage) &&
    Array.isArray(body.hourly) &&
    body.hourly.every(isHourlyUsage)
  if (!wellFormed) throw new Error(`${file} is not a usage spool file`)
  return body as SpoolFile
}

const isCount = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0

function isDailyUsage(row: unknown): boolean {
  const value = row as Partial<DailyUsage> | null
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof value.subject === 'string' &&
    typeof value.day === 'string' &&
    isCount(value.credits)
  )
}

function isHourlyUsage(row: unknown): boolean {
  const value = row as Partial<HourlyUsage> | null
  return (
    typeof value === 'object' &&
    value !== null &&
    Number.isSafeInteger(value.keyId) &&
    typeof value.network === 'string' &&
    typeof value.method === 'string' &&
    typeof value.hour === 'string' &&
    isCount(value.calls) &&
    isCount(value.credits) &&
    isCount(value.failoverCalls)
  )
}
