import assert from 'node:assert/strict'
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { bin, exited, startGatewayProcess } from './helpers/gatewayProcess.ts'
import { postJson, rpcBody } from './helpers/postJson.ts'
import { startTestGateway, type TestGateway } from './helpers/startTestGateway.ts'
import { startTestNode, type TestNode } from './helpers/startTestNode.ts'
import { until } from './helpers/until.ts'

const run = promisify(execFile)

async function tollgate(args: string[], cwd = process.cwd()) {
  const env = { ...process.env }
  delete env.TOLLGATE_CONFIG
  return run(process.execPath, [bin, ...args], { cwd, env })
}

describe('tollgate keys', () => {
  let node: TestNode
  let gateway: TestGateway

  before(async () => {
    node = await startTestNode({ loadBlocks: 1 })
    gateway = await startTestGateway({ upstreams: [node.url] })
  })
  after(async () => {
    await gateway?.close()
    await node?.stop()
  })

  it('create --json, list, revoke: the running gateway follows within a second or so', async () => {
    const { stdout } = await tollgate([
      'keys',
      'create',
      '--name',
      'ci',
      '--json',
      '--config',
      gateway.configFile,
    ])
    const created = JSON.parse(stdout) as { key: string; name: string }
    assert.match(created.key, /^[0-9a-f]{32}$/)
    assert.equal(created.name, 'ci')

    const listed = JSON.parse(
      (await tollgate(['keys', 'list', '--json', '--config', gateway.configFile])).stdout,
    )
    assert.ok(listed.some((key: { key: string }) => key.key === created.key))
    const table = (await tollgate(['keys', 'list', '--config', gateway.configFile])).stdout
    assert.match(table, new RegExp(`${created.key}\\s+ci\\s+account-[0-9a-f]+\\s+core`))

    const endpoint = `${gateway.url}/v3/${created.key}`
    await until(
      async () => (await postJson(endpoint, rpcBody('eth_chainId'))).status === 200,
      'the new key served',
    )

    assert.equal(
      (await tollgate(['keys', 'revoke', created.key, '--config', gateway.configFile])).stdout,
      'revoked\n',
    )
    await until(
      async () => (await postJson(endpoint, rpcBody('eth_chainId'))).status === 401,
      'the revoked key refused',
    )
    await assert.rejects(
      tollgate(['keys', 'revoke', created.key, '--config', gateway.configFile]),
      /no active key/,
    )
  })

  it('keys show: aligned label and value lines; --json the key view', async () => {
    const config = ['--config', gateway.configFile]
    const created = JSON.parse(
      (
        await tollgate([
          'keys',
          'create',
          '--plan',
          'growth',
          '--name',
          'shown',
          '--secret',
          '--json',
          ...config,
        ])
      ).stdout,
    ) as { key: string; account: string }
    await tollgate(['keys', 'allowlist', 'add', created.key, 'user-agents', 'MyWallet', ...config])
    await tollgate(['keys', 'security', created.key, '--jwt-audience', 'my-app', ...config])

    const shown = (await tollgate(['keys', 'show', created.key, ...config])).stdout
    assert.throws(() => JSON.parse(shown), SyntaxError, 'not JSON without --json')
    const lines = shown.trimEnd().split('\n')
    const valueColumns = new Set(lines.map((line) => /^.*?\S {2,}(?=\S)/.exec(line)?.[0].length))
    assert.equal(valueColumns.size, 1, `one value column:\n${shown}`)
    assert.ok(!valueColumns.has(undefined), `every line has a label and a value:\n${shown}`)
    assert.match(shown, new RegExp(`^key +${created.key}$`, 'm'))
    assert.match(shown, /^name +shown$/m)
    assert.match(shown, new RegExp(`^account +${created.account} \\(growth\\)$`, 'm'))
    assert.match(shown, /^status +active$/m)
    assert.match(shown, /^secret +set$/m)
    assert.match(shown, /^jwt +optional; audience my-app; keys: none$/m)
    assert.match(shown, /^allowlist user-agents +MyWallet$/m)
    assert.match(shown, /^allowlist methods +\(all\)$/m)

    const json = JSON.parse((await tollgate(['keys', 'show', created.key, '--json', ...config])).stdout)
    assert.equal(json.key, created.key)
    assert.equal(json.hasSecret, true)
    assert.equal(json.secret, undefined)
    assert.deepEqual(json.allowlists, { contracts: [], userAgents: ['MyWallet'], origins: [], methods: [] })
    assert.equal(json.jwt.audience, 'my-app')
  })

  it('TOLLGATE_CONFIG is read like --config', async () => {
    const { stdout } = await run(process.execPath, [bin, 'keys', 'create', '--json'], {
      env: { ...process.env, TOLLGATE_CONFIG: gateway.configFile },
    })
    const { key } = JSON.parse(stdout) as { key: string }
    await until(
      async () => (await postJson(`${gateway.url}/v3/${key}`, rpcBody('eth_chainId'))).status === 200,
      'the key made with TOLLGATE_CONFIG served',
    )
  })

  it('every command has --help', async () => {
    for (const args of [['--help'], ['start', '--help'], ['keys', '--help'], ['keys', 'create', '--help']]) {
      const { stdout } = await tollgate(args)
      assert.match(stdout, /Usage: tollgate/)
    }
    const { stdout } = await tollgate(['start', '--help'])
    assert.match(stdout, /--config <file>/)
    const allowlist = (await tollgate(['keys', 'allowlist', 'add', '--help'])).stdout
    assert.match(allowlist, /kind +contracts \| user-agents \| origins \| methods\n/)
    const plans = (await tollgate(['plans', '--help'])).stdout
    assert.match(plans, /defaults:\s+docs\/compatibility\.md\s+§3/)
    assert.doesNotMatch(plans, /COMPAT\.md/)
  })

  it('migrate on an SQLite file: applies each migration once, then there is nothing to apply', async () => {
    const file = join(gateway.dir, 'fresh.db')
    const configFile = join(gateway.dir, 'fresh.yaml')
    writeFileSync(configFile, `storage:\n  sqlite: ${file}\n`)
    const first = (await tollgate(['migrate', '--config', configFile])).stdout
    assert.equal(
      first,
      [
        'applied migration 1: keys',
        'applied migration 2: accounts and usage ledger',
        'applied migration 3: fee history',
        'applied migration 4: usage batches',
        'applied migration 5: account tokens',
        'applied migration 6: request log',
        'applied migration 7: usage alerts',
        'applied migration 8: usage per instance',
        `sqlite ${file} is at schema version 8`,
        '',
      ].join('\n'),
    )
    assert.equal(
      (await tollgate(['migrate', '--config', configFile])).stdout,
      `sqlite ${file} is at schema version 8 (nothing to apply)\n`,
    )
    // the running gateway's file is up to date already, and migrate does not need its lock
    const running = JSON.parse((await tollgate(['migrate', '--json', '--config', gateway.configFile])).stdout)
    assert.deepEqual(running.applied, [])
  })

  it('usage --days out of range is refused with the bound', async () => {
    const configFile = join(gateway.dir, 'usage-days.yaml')
    writeFileSync(configFile, `storage:\n  sqlite: ${join(gateway.dir, 'usage-days.db')}\n`)
    await assert.rejects(
      tollgate(['usage', '--days', '99999999999', '--config', configFile]),
      (err: { stderr: string; code: number }) => {
        assert.equal(err.code, 1)
        assert.equal(err.stderr, '--days: expected a whole number from 1 to 3650\n')
        return true
      },
    )
  })

  it('a bad config file stops the command with the file, the path and what was expected', async () => {
    const file = join(gateway.dir, 'bad.yaml')
    writeFileSync(file, 'networks: [{ name: x, chainId: -1, upstreams: [] }]\n')
    await assert.rejects(
      tollgate(['keys', 'list', '--config', file]),
      (err: { stderr: string; code: number }) => {
        assert.equal(err.code, 2)
        assert.match(err.stderr, new RegExp(`${file}: invalid config`))
        assert.match(err.stderr, /networks\.0\.chainId: /)
        assert.match(err.stderr, /networks\.0\.upstreams: expected at least one upstream/)
        return true
      },
    )
  })

  it('start with `networks: []` in the config file stops with a message instead of starting the devnet', async () => {
    const file = join(gateway.dir, 'empty-networks.yaml')
    writeFileSync(
      file,
      `storage: { sqlite: ${JSON.stringify(join(gateway.dir, 'empty.db'))} }\nnetworks: []\n`,
    )
    // the timeout only ends a gateway that started after all, so that the test fails instead of hanging
    const started = run(process.execPath, [bin, 'start', '--port', '0', '--config', file], {
      timeout: 60_000,
    })
    await assert.rejects(started, (err: { stderr: string; stdout: string; code: number }) => {
      assert.equal(err.code, 2, `exit code 2; output: ${err.stdout}${err.stderr}`)
      assert.equal(
        err.stderr,
        `${file}: invalid config\n  networks: at least one network is needed; leave the key out for the embedded devnet\n`,
      )
      assert.doesNotMatch(err.stdout, /listening/)
      return true
    })
  })
})

describe('tollgate start with no config (embedded devnet)', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-embedded-'))
  after(() => rmSync(cwd, { recursive: true, force: true }))

  it('serves the seeded devnet with a demo key kept across restarts; Ctrl-C leaves nothing running', async () => {
    const first = await startEmbedded(cwd)
    after(() => {
      first.child.kill('SIGKILL')
    })
    assert.ok(existsSync(join(cwd, 'data', 'tollgate.db')))
    const endpoint = `${first.url}/v3/${first.key}`
    const block = await postJson(endpoint, rpcBody('eth_blockNumber'))
    assert.ok(
      Number.parseInt((block.json as { result: string }).result, 16) >= 300,
      'a few hundred seeded blocks',
    )
    const code = await postJson(endpoint, rpcBody('eth_getCode', [first.demo, 'latest']))
    assert.ok(((code.json as { result: string }).result ?? '').length > 100, 'the Demo contract is deployed')
    assert.match(first.banner, /curl http:\/\/127\.0\.0\.1:\d+\/v3\/[0-9a-f]{32}/)
    assert.match(first.banner, /createPublicClient/)
    // the node behind it, printed beside the key: the same seeded chain, answering what the gateway refuses
    const node = /devnet node: (http:\/\/127\.0\.0\.1:\d+) \(anvil, chain id 31337\)/.exec(first.banner)?.[1]
    assert.ok(node, `the devnet node's URL in:\n${first.banner}`)
    assert.notEqual(node, first.url)
    assert.deepEqual((await postJson(node, rpcBody('eth_getCode', [first.demo, 'latest']))).json, code.json)
    const cheat = rpcBody('anvil_setBalance', ['0x000000000000000000000000000000000000dEaD', '0x1'])
    assert.equal(((await postJson(endpoint, cheat)).json as { error: { code: number } }).error.code, -32601)
    assert.deepEqual((await postJson(node, cheat)).json, { jsonrpc: '2.0', id: 1, result: null })

    // a request in flight when Ctrl-C arrives (its body half sent) still gets its answer
    const children = childPids(first.child.pid ?? 0, 'anvil')
    assert.equal(children.length, 1, 'one anvil')
    const body = JSON.stringify(rpcBody('eth_getBlockByNumber', ['latest', true]))
    const inFlight = startRequest(endpoint, body)
    await inFlight.received
    first.child.kill('SIGINT')
    // the gateway has stopped accepting connections: it is draining, with the request still in flight
    await until(async () => !(await acceptsConnections(first.url)), 'the gateway draining')
    const answer = await inFlight.finish()
    assert.equal(answer.status, 200)
    assert.match(answer.text, /"result":\{/)
    assert.equal(await exited(first.child), 0)
    for (const pid of children) assert.equal(isRunning(pid), false, `anvil ${pid} stopped`)

    const second = await startEmbedded(cwd)
    after(() => {
      second.child.kill('SIGKILL')
    })
    const secondChildren = childPids(second.child.pid ?? 0, 'anvil')
    try {
      assert.equal(second.key, first.key)
      assert.equal(secondChildren.length, 1, 'one anvil')
    } finally {
      // at once on reading the banner: the signal must already be handled
      second.child.kill('SIGINT')
      assert.equal(await exited(second.child), 0)
    }
    for (const pid of secondChildren) assert.equal(isRunning(pid), false, `anvil ${pid} stopped`)
  })

  it('Ctrl-C while the devnet is still being seeded: it stops once started, and leaves nothing running', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'tollgate-embedded-'))
    after(() => rmSync(fresh, { recursive: true, force: true }))
    const env = { ...process.env }
    delete env.TOLLGATE_CONFIG
    const child = spawn(process.execPath, [bin, 'start', '--port', '0'], {
      cwd: fresh,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    after(() => {
      child.kill('SIGKILL')
    })
    let output = ''
    const collect = (chunk: Buffer) => {
      output += chunk.toString()
    }
    child.stdout.on('data', collect)
    child.stderr.on('data', collect)
    let anvils: number[] = []
    after(() => {
      for (const pid of anvils) if (isRunning(pid)) process.kill(pid, 'SIGKILL')
    })
    await until(() => {
      anvils = childPids(child.pid ?? 0, 'anvil')
      return anvils.length > 0
    }, 'the devnet to start')
    assert.doesNotMatch(output, /Ctrl-C stops/, 'still starting')
    child.kill('SIGINT')
    assert.equal(await exited(child), 0)
    assert.match(output, /stopping once started/)
    assert.doesNotMatch(output, /Ctrl-C stops/, 'no banner for a gateway that is stopping')
    for (const pid of anvils) assert.equal(isRunning(pid), false, `anvil ${pid} stopped`)
  })
})

/**
 * Sends the headers and half the body now; `received` settles once the server has taken the request
 * (its `100 Continue`, sent as the request reaches the server's handler); `finish` sends the rest
 * and reads the answer.
 */
function startRequest(url: string, body: string) {
  const half = Math.floor(body.length / 2)
  const request = httpRequest(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      expect: '100-continue',
    },
  })
  const received = new Promise<void>((resolve, reject) => {
    request.once('continue', resolve)
    request.once('error', reject)
  })
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    request.on('response', async (response) => {
      let text = ''
      for await (const chunk of response) text += chunk
      resolve({ status: response.statusCode ?? 0, text })
    })
    request.on('error', reject)
  })
  request.write(body.slice(0, half))
  return {
    received,
    finish() {
      request.end(body.slice(half))
      return answer
    },
  }
}

type Embedded = { child: ChildProcess; url: string; key: string; demo: string; banner: string }

async function startEmbedded(cwd: string): Promise<Embedded> {
  const { child, url, output } = await startGatewayProcess(['start', '--port', '0'], {
    cwd,
    ready: /Ctrl-C stops/,
  })
  const banner = output()
  const key = /Demo API key: ([0-9a-f]{32})/.exec(banner)?.[1] ?? ''
  const demo = /Demo contract (0x[0-9a-fA-F]{40})/.exec(banner)?.[1] ?? ''
  return { child, url, key, demo, banner }
}

function childPids(parent: number, command: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
        return name === command && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent
      } catch {
        return false
      }
    })
    .map(Number)
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

function acceptsConnections(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
