import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { freePort } from './localProcesses.ts'
import { until } from './until.ts'

/** Debian's prometheus package (scripts/ensurePromtool.js installs it for `npm test`). */
const prometheusPath = process.env.TOLLGATE_PROMETHEUS ?? '/usr/bin/prometheus'

export type QueryAnswer = { status: string; error?: string; data?: { result: unknown[] } }

export type TestPrometheus = {
  /** An instant query, as Grafana and the rule evaluator send it. */
  query(expr: string): Promise<QueryAnswer>
  stop(): Promise<void>
}

/**
 * A real Prometheus scraping `targets` (host:port) every second, with its data in a temp dir; resolves
 * once it holds `samples` scrapes of each.
 */
export async function startPrometheus(targets: string[], samples = 3): Promise<TestPrometheus> {
  if (!existsSync(prometheusPath)) {
    throw new Error(
      `no Prometheus at ${prometheusPath}: apt-get install -y prometheus (or set TOLLGATE_PROMETHEUS)`,
    )
  }
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-prometheus-'))
  writeFileSync(
    join(dir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      scrape_configs: [{ job_name: 'tollgate', static_configs: [{ targets }] }],
    }),
  )
  const port = await freePort()
  const child: ChildProcess = spawn(
    prometheusPath,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=error',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  )
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
  const query = async (expr: string): Promise<QueryAnswer> => {
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expr)}`)
    return (await response.json()) as QueryAnswer
  }
  try {
    await until(
      async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}`)
        const answer = await query('min(count_over_time(up[1m]))').catch(() => undefined)
        const value = (answer?.data?.result[0] as { value?: [number, string] } | undefined)?.value?.[1]
        return Number(value ?? 0) >= samples
      },
      `${samples} scrapes by Prometheus`,
      60_000,
    )
  } catch (err) {
    await stop()
    throw err
  }
  return { query, stop }
}
