import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { parse } from 'yaml'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { promqlMetricNames } from './helpers/promqlMetricNames.ts'
import { parseMetrics } from './helpers/readMetrics.ts'
import { startPrometheus } from './helpers/startPrometheus.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { devnetOver, startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { createTestPrefix, type TestPrefix } from './helpers/testRedis.ts'
import { until } from './helpers/until.ts'

const root = join(import.meta.dirname, '..')
/** Grafana's reference to the dashboard's `datasource` variable. */
const datasourceVariable = ['$', '{datasource}'].join('')

type Panel = {
  title?: string
  datasource?: { uid?: string }
  targets?: { expr?: string }[]
  panels?: Panel[]
}
type Dashboard = {
  panels: Panel[]
  templating: {
    list: {
      name: string
      type: string
      query?: string | { query: string }
      current?: { value?: unknown }
      includeAll?: boolean
      multi?: boolean
    }[]
  }
}

const dashboard = JSON.parse(readFileSync(join(root, 'deploy/grafana/tollgate.json'), 'utf8')) as Dashboard
const alertRules = parse(readFileSync(join(root, 'deploy/prometheus/alerts.yml'), 'utf8')) as {
  groups: { rules: { alert: string; expr: string }[] }[]
}

type Query = { where: string; expr: string; kind: 'panel' | 'variable' | 'alert' }

/** Every PromQL query of the dashboard (panels, rows' panels, variables) and of the alert rules, with where it is. */
function queries(): Query[] {
  const panels = (list: Panel[]): Panel[] => list.flatMap((panel) => [panel, ...panels(panel.panels ?? [])])
  return [
    ...panels(dashboard.panels).flatMap((panel) =>
      (panel.targets ?? []).map(
        (target): Query => ({ where: `panel "${panel.title}"`, expr: target.expr ?? '', kind: 'panel' }),
      ),
    ),
    ...dashboard.templating.list.flatMap((variable) =>
      variable.type === 'query' && variable.query !== undefined
        ? [
            {
              where: `variable $${variable.name}`,
              expr: typeof variable.query === 'string' ? variable.query : variable.query.query,
              kind: 'variable' as const,
            },
          ]
        : [],
    ),
    ...alertRules.groups.flatMap((group) =>
      group.rules.map((rule): Query => ({ where: `alert ${rule.alert}`, expr: rule.expr, kind: 'alert' })),
    ),
  ]
}

/**
 * A query as Prometheus gets it from Grafana with every network and instance chosen: the variables
 * filled in (a rate over 5 s of 1 s scrapes), a `label_values` variable's series selector alone.
 */
function toInstantQuery({ expr, kind }: Query): string {
  const selector = kind === 'variable' ? /^label_values\((.*),\s*\w+\)$/s.exec(expr)?.[1] : undefined
  return (selector ?? expr)
    .replaceAll('$__rate_interval', '5s')
    .replaceAll('$job', 'tollgate')
    .replaceAll('$network', '.*')
    .replaceAll('$instance', '.*')
}

/** Series Prometheus makes itself for each target, which no gateway exports. */
const prometheusOwn = new Set(['up'])

/** The selectors of `expr` that read a metric without `job=~"$job"` (or read it with no selector at all). */
function selectorsWithoutJob(expr: string): string[] {
  return promqlMetricNames(expr).flatMap((name) =>
    [...expr.matchAll(new RegExp(`(?<![\\w:])${name}(?![\\w:])(\\{[^}]*\\})?`, 'g'))]
      .filter((match) => !match[1]?.includes('job=~"$job"'))
      .map((match) => match[0]),
  )
}

/** The families of a Prometheus text (name → type) and the names of its samples. */
function readExposition(text: string): { families: Map<string, string>; sampled: Set<string> } {
  const families = new Map<string, string>()
  const sampled = new Set<string>()
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line)
    if (type) families.set(type[1] as string, type[2] as string)
    else if (line !== '' && !line.startsWith('#')) sampled.add(/^[^{ ]+/.exec(line)?.[0] as string)
  }
  return { families, sampled }
}

/** Whether the gateway exports `name` with at least one series (a histogram's or summary's parts by their family). */
function isExported(name: string, { families, sampled }: ReturnType<typeof readExposition>): boolean {
  if (families.has(name)) return sampled.has(name) || [...sampled].some((each) => each.startsWith(`${name}_`))
  const family = name.replace(/_(bucket|sum|count)$/, '')
  const type = families.get(family)
  return family !== name && (type === 'histogram' || type === 'summary') && sampled.has(name)
}

describe('the Grafana dashboard and the alert rules', () => {
  it('finds the metric names in PromQL', () => {
    assert.deepEqual(
      promqlMetricNames(
        'sum by (network) (rate(a_total{x="y{z}",n=~"$network"}[$__rate_interval])) / on(job) group_left(u) b offset 5m > 1e3 and bool c',
      ),
      ['a_total', 'b', 'c'],
    )
    assert.deepEqual(promqlMetricNames('label_values(d{network=~"$network"}, instance)'), ['d'])
    assert.deepEqual(promqlMetricNames('histogram_quantile(0.9, sum by (le) (rate(e_bucket[5m])))'), [
      'e_bucket',
    ])
  })

  it('finds the selectors of a query that are not filtered on the job', () => {
    assert.deepEqual(
      selectorsWithoutJob(
        'rate(a_total{job=~"$job",x="1"}[5m]) / b{instance=~"$instance"} + a_total_more{job=~"$job"} - c',
      ),
      ['b{instance=~"$instance"}', 'c'],
    )
  })

  it('is a dashboard with a datasource variable, job, network and instance variables, on every query', () => {
    const variables = new Map(dashboard.templating.list.map((variable) => [variable.name, variable.type]))
    assert.equal(variables.get('datasource'), 'datasource')
    assert.equal(variables.get('job'), 'query')
    assert.equal(variables.get('network'), 'query')
    assert.equal(variables.get('instance'), 'query')
    // the job's default is the scrape job of docs/observability.md, and it is one job: with any other
    // job's targets (Prometheus itself, node_exporter) the process panels would plot those processes
    const job = dashboard.templating.list.find((variable) => variable.name === 'job')
    assert.deepEqual(
      { current: job?.current?.value, includeAll: job?.includeAll, multi: job?.multi },
      { current: 'tollgate', includeAll: false, multi: false },
    )
    const unfiltered = queries()
      .filter((query) => query.kind !== 'alert' && query.where !== 'variable $job')
      .flatMap(({ where, expr }) => selectorsWithoutJob(expr).map((selector) => `${where}: ${selector}`))
    assert.deepEqual(unfiltered, [], 'every query reads only the job chosen')
    const panels = dashboard.panels.filter((panel) => panel.targets !== undefined)
    assert.ok(panels.length >= 20)
    for (const panel of panels)
      assert.equal(panel.datasource?.uid, datasourceVariable, `panel "${panel.title}"`)
  })
})

describe('every query of the dashboard and the alerts names a metric a running gateway exports', () => {
  let node: TestNode
  let schema: TestSchema
  let prefix: TestPrefix
  let gateway: TestGateway
  let socket: WebSocket | undefined

  before(async () => {
    node = await startTestNode({ loadBlocks: 5 })
    schema = await createTestSchema()
    prefix = createTestPrefix()
    gateway = await startTestGateway({
      config: {
        storage: { postgres: schema.url },
        redis: { url: prefix.url, keyPrefix: prefix.keyPrefix },
        networks: devnetOver(node),
        gas: { enabled: true },
        metering: { flushMs: 200 },
      },
    })
  })
  after(async () => {
    socket?.terminate()
    await gateway?.close()
    await schema?.drop()
    await prefix?.remove()
    await node?.stop()
  })

  it('serves calls, a subscription and a refusal, then exports every metric the queries read', async () => {
    for (const id of [1, 2]) {
      const response = await postJson(gateway.endpoint, rpcBody('eth_chainId', [], id))
      assert.deepEqual(response.json, { jsonrpc: '2.0', id, result: '0x7a69' })
    }
    // a key with the credits of ten calls: spent, then refused with 402
    const first = await postJson(gateway.endpoint, rpcBody('eth_blockNumber', []))
    const costCredits = Number(first.headers.get('x-credits-charged'))
    assert.ok(costCredits > 0)
    const { key: small } = await gateway.app.keyAdmin.create({
      plan: 'custom',
      name: 'small',
      dailyCredits: 10 * costCredits,
      creditsPerSecond: 1_000_000,
    })
    await gateway.app.keys.refresh()
    let served = 0
    let refused = false
    while (served <= 10 && !refused) {
      const response = await postJson(`${gateway.url}/v3/${small.key}`, rpcBody('eth_blockNumber', []))
      if (response.status === 200) served++
      refused = response.status === 402
    }
    assert.equal(served, 10)
    assert.ok(refused, 'the small key is refused with 402 once its credits are spent')

    socket = new WebSocket(`${gateway.url.replace('http', 'ws')}/ws/v3/${gateway.key}`)
    const open = socket
    const subscribed = new Promise<unknown>((resolve) =>
      open.once('message', (data) => resolve(JSON.parse(`${data}`))),
    )
    await new Promise((resolve) => open.once('open', resolve))
    open.send(JSON.stringify(rpcBody('eth_subscribe', ['newHeads'], 7)))
    const answer = (await subscribed) as { id: number; result: string }
    assert.equal(answer.id, 7)

    await until(() => gateway.app.indexers.get(31337)?.window() !== undefined, 'the fee-history window')
    await gateway.app.meter.flush()

    const response = await fetch(`${gateway.url}/metrics`)
    assert.equal(response.status, 200)
    const text = await response.text()
    const exposition = readExposition(text)

    const missing = queries().flatMap(({ where, expr }) =>
      promqlMetricNames(expr)
        .filter((name) => !prometheusOwn.has(name) && !isExported(name, exposition))
        .map((name) => `${where}: ${name}`),
    )
    assert.deepEqual(missing, [], 'every metric a query names is exported')
    assert.ok(queries().length >= 40)

    // and what they read is what happened
    const metrics = parseMetrics(text)
    const devnet = { network: 'devnet' }
    assert.equal(metrics.value('tollgate_websocket_connections'), 1)
    assert.equal(metrics.value('tollgate_subscriptions', { ...devnet, kind: 'newHeads' }), 1)
    assert.equal(metrics.value('tollgate_subscriptions', { ...devnet, kind: 'logs' }), 0)
    assert.equal(metrics.value('tollgate_redis_up'), 1)
    assert.equal(metrics.value('tollgate_database_up', { database: 'postgres' }), 1)
    assert.ok((metrics.value('tollgate_meter_refusals_total', { status: '402' }) ?? 0) >= 1)
    assert.equal(
      metrics.value('tollgate_keys_daily_credits_used', { at_least: '1' }),
      1,
      'the small key, spent',
    )
    assert.ok((metrics.value('tollgate_credits_charged_total', devnet) ?? 0) >= 100)
    assert.ok((metrics.value('tollgate_calls_total', devnet) ?? 0) >= 3)
    const head = metrics.value('tollgate_network_head', devnet)
    assert.ok(head !== undefined && head > 0)
    assert.ok((metrics.value('tollgate_gas_indexed_head', devnet) ?? -1) >= 0)
    assert.equal(metrics.value('tollgate_gas_window_loaded', devnet), 1)
    // every attempt is in the histogram: the calls above were answered, within the +Inf bucket
    const ok = { ...devnet, outcome: 'ok' }
    const answered = metrics.all('tollgate_upstream_attempt_duration_seconds_count', ok)
    assert.ok(answered.length >= 1 && answered.every(({ value }) => value >= 1), JSON.stringify(answered))
    const attempts = metrics.sum('tollgate_upstream_attempt_duration_seconds_count', ok)
    const infinite = metrics.sum('tollgate_upstream_attempt_duration_seconds_bucket', { ...ok, le: '+Inf' })
    assert.equal(infinite, attempts)
    // a closed breaker has no cooldown
    const cooldowns = metrics.all('tollgate_upstream_breaker_cooldown_seconds', devnet)
    assert.ok(cooldowns.length >= 1 && cooldowns.every(({ value }) => value === 0), JSON.stringify(cooldowns))
  })

  it('has every dashboard query answered with series by a Prometheus scraping the gateway, every alert evaluated', async () => {
    const prometheus = await startPrometheus([new URL(gateway.url).host])
    try {
      const failures: string[] = []
      for (const query of queries()) {
        const answer = await prometheus.query(toInstantQuery(query))
        if (answer.status !== 'success') failures.push(`${query.where}: ${answer.error}`)
        // an alert's expression holds its threshold: no series is the gateway being well
        else if (query.kind !== 'alert' && answer.data?.result.length === 0)
          failures.push(`${query.where}: no series for ${toInstantQuery(query)}`)
      }
      assert.deepEqual(failures, [])
    } finally {
      await prometheus.stop()
    }
  })

  it('documents every tollgate_ metric it exports in docs/operations.md', async () => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text()
    const docs = readFileSync(join(root, 'docs/operations.md'), 'utf8')
    const undocumented = [...readExposition(text).families.keys()].filter(
      (name) => name.startsWith('tollgate_') && !docs.includes(`\`${name}`),
    )
    assert.deepEqual(undocumented, [])
  })
})
