import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, it } from 'node:test'

// The shape docs/design/architecture.md draws, kept true: every import under src/ read from the
// source text (static, re-exports, dynamic `import()`, type-only ones too).

const src = resolve(import.meta.dirname, '../src')

/**
 * Each folder of src/ and the folders its source files may import (its own always). app/, cli/ and
 * main.ts wire everything together and may import anything. Unit tests are left out: they wire what
 * they test as app/ does, and nothing imports them.
 */
const mayImport: Record<string, readonly string[] | 'anything'> = {
  'main.ts': 'anything',
  cli: 'anything',
  app: 'anything',
  // bytes in, bytes out: hands JSON-RPC to pipeline/, the other routes to their areas
  server: [
    'pipeline',
    'admin',
    'accounts',
    'gas',
    'metrics',
    'auth',
    'upstreams',
    'jsonrpc',
    'failsafe',
    'errors',
  ],
  admin: [
    'accounts',
    'alerts',
    'requestLog',
    'auth',
    'gas',
    'metering',
    'networks',
    'upstreams',
    'store',
    'config',
    'errors',
    'formats',
  ],
  // key holders' accounts: their sign-in tokens and the account API, on the keys, usage, alerts and request log below
  accounts: ['alerts', 'requestLog', 'auth', 'metering', 'store', 'config', 'errors', 'formats'],
  // usage alerts: events found in the ledger's usage, delivered as webhooks
  alerts: ['auth', 'metering', 'store', 'errors'],
  // the request log implements pipeline/'s tap (as tracing/ its trace) and reads what it wrote
  requestLog: ['pipeline', 'auth', 'metering', 'jsonrpc', 'store', 'errors'],
  pipeline: [
    'auth',
    'metering',
    'cache',
    'methods',
    'subscriptions',
    'networks',
    'upstreams',
    'jsonrpc',
    'failsafe',
    'errors',
  ],
  // the Gas REST API authorizes and charges a call as pipeline/ does
  gas: ['pipeline', 'auth', 'metering', 'methods', 'networks', 'upstreams', 'store', 'errors'],
  subscriptions: ['methods', 'networks', 'upstreams', 'errors'],
  devnet: ['auth', 'config'],
  metrics: ['networks', 'upstreams', 'failsafe', 'errors'],
  // OpenTelemetry spans for the pipeline's trace and the upstreams' attempts (loaded only when on)
  tracing: ['pipeline', 'upstreams', 'config'],
  // a key's plan and usage come from metering/; authorize reads each method's contract
  auth: ['metering', 'methods', 'store', 'config', 'errors', 'formats'],
  metering: ['store', 'config', 'errors', 'failsafe'],
  cache: ['methods', 'store', 'jsonrpc', 'failsafe'],
  // the head tracker shares heads between gateways through cache/, and its polls by a lease in store/
  networks: ['cache', 'upstreams', 'store', 'config', 'failsafe'],
  methods: ['errors'],
  upstreams: ['config', 'jsonrpc', 'failsafe', 'errors'],
  // the low folders: nothing above them
  store: ['config'],
  config: ['formats'],
  formats: ['errors'],
  jsonrpc: ['errors'],
  errors: [],
  failsafe: [],
}

/** The folders at the bottom: what they may import is only each other. */
const lowFolders = ['store', 'config', 'formats', 'jsonrpc', 'errors', 'failsafe']

const maxLines = 400

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : []
  })
}

/** `import ... from`, `export ... from`, `import '...'` and `import('...')`, in code or in types. */
const importPattern = /(?<![\w$.])(?:from|import)\s*\(?\s*['"]([^'"\n]+)['"]/g

/** Each file's imports of other files under src/, as paths relative to src/. */
function readImports(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sourceFiles(src)) {
    const targets = [...readFileSync(file, 'utf8').matchAll(importPattern)]
      .map((match) => match[1] as string)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => {
        const target = resolve(dirname(file), specifier)
        assert.ok(existsSync(target), `${relative(src, file)} imports ${specifier}: no such file`)
        return relative(src, target)
      })
    graph.set(relative(src, file), [...new Set(targets)])
  }
  return graph
}

const folderOf = (path: string) => path.split('/')[0] as string

/** Every group of files that import each other round (Tarjan), each as one circle through it. */
function findCircles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const groups: string[][] = []
  const visit = (file: string) => {
    index.set(file, index.size)
    low.set(file, index.get(file) as number)
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number))
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) as number, index.get(target) as number))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const group: string[] = []
    let member: string
    do {
      member = stack.pop() as string
      onStack.delete(member)
      group.push(member)
    } while (member !== file)
    if (group.length > 1 || graph.get(file)?.includes(file)) groups.push(group)
  }
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file)
  return groups.map((group) => shortestCircle(graph, new Set(group), group.sort()[0] as string))
}

/** The shortest way from `start` back to itself inside `group`: start, ..., start. */
function shortestCircle(graph: Map<string, string[]>, group: Set<string>, start: string): string[] {
  const cameFrom = new Map<string, string>()
  const queue = [start]
  for (const file of queue) {
    for (const target of graph.get(file) ?? []) {
      if (!group.has(target)) continue
      if (target === start) {
        const path: string[] = []
        for (let at: string | undefined = file; at !== start && at !== undefined; at = cameFrom.get(at))
          path.unshift(at)
        return [start, ...path, start]
      }
      if (cameFrom.has(target)) continue
      cameFrom.set(target, file)
      queue.push(target)
    }
  }
  return [start]
}

describe('layers: how src/ imports itself', () => {
  const graph = readImports()

  it('every folder of src/ has its row in the table, and the low folders import only each other', () => {
    const folders = new Set([...graph.keys()].map(folderOf))
    assert.deepEqual([...folders].sort(), Object.keys(mayImport).sort())
    for (const folder of lowFolders) {
      const allowed = mayImport[folder]
      assert.ok(Array.isArray(allowed), folder)
      for (const below of allowed) assert.ok(lowFolders.includes(below), `${folder} may import ${below}`)
    }
  })

  it('imports run one way: each folder imports only the folders its row allows', () => {
    const wrong: string[] = []
    for (const [file, targets] of graph) {
      const allowed = mayImport[folderOf(file)]
      if (allowed === 'anything') continue
      for (const target of targets) {
        const folder = folderOf(target)
        if (folder !== folderOf(file) && !allowed?.includes(folder)) wrong.push(`${file} -> ${target}`)
      }
    }
    assert.deepEqual(wrong, [], `imports against the layers:\n  ${wrong.join('\n  ')}`)
  })

  it('only app/ imports server/, only cli/ imports app/', () => {
    const wrong = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) => {
          const [from, to] = [folderOf(file), folderOf(target)]
          return from !== to && ((to === 'server' && from !== 'app') || (to === 'app' && from !== 'cli'))
        })
        .map((target) => `${file} -> ${target}`),
    )
    assert.deepEqual(wrong, [])
  })

  it('the table is exact: each folder a row allows is one its files do import', () => {
    const used = new Set(
      [...graph].flatMap(([file, targets]) =>
        targets.map((target) => `${folderOf(file)} -> ${folderOf(target)}`),
      ),
    )
    const unused = Object.entries(mayImport).flatMap(([folder, allowed]) =>
      allowed === 'anything'
        ? []
        : allowed
            .filter((below) => !used.has(`${folder} -> ${below}`))
            .map((below) => `${folder} -> ${below}`),
    )
    assert.deepEqual(
      unused,
      [],
      `allowed, imported by no file (take them out of the table):\n  ${unused.join('\n  ')}`,
    )
  })

  it('no import circles, type-only imports included', () => {
    const circles = findCircles(graph).map((circle) => circle.join(' -> '))
    assert.deepEqual(circles, [], `import circles:\n  ${circles.join('\n  ')}`)
  })

  it(`every source file is at most ${maxLines} lines`, () => {
    const long = [...graph.keys()]
      .map((file) => ({ file, lines: readFileSync(join(src, file), 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > maxLines)
      .map(({ file, lines }) => `${file} (${lines} lines)`)
    assert.deepEqual(long, [], `files over ${maxLines} lines:\n  ${long.join('\n  ')}`)
  })
})
