import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { stringify } from 'yaml'
import { exited, startGatewayProcess } from './helpers/gatewayProcess.ts'

// A module hook, registered in the gateway's process before it runs, that writes down every module
// the process resolves (one URL a line) in the file named by TOLLGATE_TEST_IMPORTS.
const recordResolved = `
import { appendFileSync } from 'node:fs'
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  appendFileSync(process.env.TOLLGATE_TEST_IMPORTS, resolved.url + '\\n')
  return resolved
}`
const registerHook = `import { register } from 'node:module'
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(recordResolved)}`)})`

/**
 * The package files a file of the build was bundled from, as the bundle names them: a comment
 * (`// node_modules/undici/lib/...`) before each module it holds, with or without source maps.
 */
function bundledSources(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/^\/\/ (.*node_modules\/.+)$/gm)].map(
    (match) => match[1] as string,
  )
}

describe('a gateway in front of nodes, on SQLite, loads only what it uses', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-imports-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('not viem (the devnet seeding), pg, ioredis or openid-client: libraries it does not use weigh on every collection', async () => {
    const configFile = join(dir, 'tollgate.yaml')
    const imports = join(dir, 'imports.txt')
    writeFileSync(
      configFile,
      stringify({
        server: { host: '127.0.0.1', port: 0 },
        storage: { sqlite: join(dir, 'tollgate.db') },
        networks: [{ name: 'devnet', chainId: 31337, upstreams: [{ url: 'http://127.0.0.1:9' }] }],
        gas: { enabled: false },
        log: { level: 'error' },
      }),
    )
    const gateway = await startGatewayProcess(['start', '--config', configFile], {
      nodeFlags: ['--import', `data:text/javascript,${encodeURIComponent(registerHook)}`],
      env: { TOLLGATE_TEST_IMPORTS: imports },
    })
    gateway.child.kill('SIGTERM')
    assert.equal(await exited(gateway.child), 0)
    // a package outside the bundle is resolved from node_modules; one inside it is in the bundle's
    // files that were loaded, which name the files each was made of
    const packages = new Set(
      readFileSync(imports, 'utf8')
        .split('\n')
        .filter((url) => url.startsWith('file:'))
        .flatMap((url) => (url.includes('/node_modules/') ? [url] : bundledSources(fileURLToPath(url))))
        .map((path) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1])
        .filter((name) => name !== undefined),
    )
    // the record is complete enough to tell: what the gateway does use is in it
    for (const used of ['better-sqlite3', 'undici', 'pino']) assert.ok(packages.has(used), `${used} recorded`)
    for (const unused of ['viem', 'pg', 'ioredis', 'openid-client'])
      assert.ok(!packages.has(unused), `${unused} was loaded`)
  })
})
