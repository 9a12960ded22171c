// The PostgreSQL and Redis the tests need (test/helpers/testServers.ts reads their URLs). When nothing
// answers at TOLLGATE_TEST_POSTGRES_URL / TOLLGATE_TEST_REDIS_URL (or their defaults), or
// TOLLGATE_TEST_OWN_SERVERS=1, scripts/runTests.js gets servers of the run's own from here: Debian's
// binaries (installed with apt-get when missing and this user may: root, as on CI), started on free
// ports with data folders under the system's temp folder, stopped by PID and removed after the run.
// Without the binaries and the right to install them, it says what to install and how to point the
// tests at running servers.
import { spawn, spawnSync } from 'node:child_process'
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

const defaults = {
  postgres: 'postgres://postgres@127.0.0.1:5432/test',
  redis: 'redis://127.0.0.1:6379',
}
const folderPrefix = 'tollgate-test-servers-'

/**
 * Makes sure the tests have a PostgreSQL and a Redis. Resolves with the environment the test processes
 * get (the URLs of servers of the run's own, when it started any), `stop` (stops and removes them; safe
 * to call twice) and `advice` (what to do, when neither a server nor the means to start one is there).
 */
export async function ensureServices(env = process.env) {
  const wanted = {
    postgres: env.TOLLGATE_TEST_POSTGRES_URL || defaults.postgres,
    redis: env.TOLLGATE_TEST_REDIS_URL || defaults.redis,
  }
  const own = env.TOLLGATE_TEST_OWN_SERVERS === '1'
  const missing = []
  for (const name of ['postgres', 'redis']) if (own || !(await answers(wanted[name]))) missing.push(name)
  if (missing.length === 0) return { env, stop: async () => undefined }
  removeLeftovers()
  const binaries = findBinaries(missing)
  if (missing.some((name) => binaries[name] === undefined))
    return { env, stop: async () => undefined, advice: advice(wanted, missing, binaries, own) }
  const folder = join(tmpdir(), `${folderPrefix}${process.pid}`)
  mkdirSync(folder, { recursive: true })
  const started = []
  const stop = async () => {
    await Promise.all(started.splice(0).map((server) => server.stop()))
    rmSync(folder, { recursive: true, force: true })
  }
  try {
    const urls = {}
    for (const name of missing) {
      const server = await (name === 'postgres' ? startPostgres : startRedis)(
        binaries[name],
        folder,
        wanted[name],
      )
      started.push(server)
      urls[name] = server.url
      console.log(
        `${reason(wanted[name], own)}: started a ${server.title} of this run's own at ${server.url} (pid ${server.pid})`,
      )
    }
    return {
      env: {
        ...env,
        ...(urls.postgres && { TOLLGATE_TEST_POSTGRES_URL: urls.postgres }),
        ...(urls.redis && { TOLLGATE_TEST_REDIS_URL: urls.redis }),
      },
      stop,
    }
  } catch (err) {
    await stop()
    throw err
  }
}

function reason(url, own) {
  return own ? 'TOLLGATE_TEST_OWN_SERVERS=1' : `nothing answers at ${redact(url)}`
}

function redact(url) {
  const parsed = new URL(url)
  if (parsed.password) parsed.password = '***'
  return parsed.toString()
}

/** Whether something accepts a TCP connection at the URL's host and port (within a second). */
function answers(url) {
  const parsed = new URL(url)
  const port = Number(parsed.port || (parsed.protocol === 'redis:' ? 6379 : 5432))
  return new Promise((resolve) => {
    const socket = connect({ host: parsed.hostname, port, timeout: 1_000 })
    const done = (ok) => {
      socket.destroy()
      resolve(ok)
    }
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
    socket.once('timeout', () => done(false))
  })
}

/** The server binaries: Debian's, installed with apt-get first when missing and this user may. */
function findBinaries(missing) {
  let found = { postgres: findPostgres(), redis: findOnPath('redis-server') }
  const packages = { postgres: 'postgresql', redis: 'redis-server' }
  const absent = missing.filter((name) => found[name] === undefined)
  if (absent.length > 0 && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')) {
    console.log(`installing Debian's ${absent.map((name) => packages[name]).join(' and ')} for the tests`)
    for (const args of [
      ['update', '-q'],
      ['install', '-y', '-q', ...absent.map((name) => packages[name])],
    ]) {
      const result = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'] })
      if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed`)
    }
    found = { postgres: findPostgres(), redis: findOnPath('redis-server') }
  }
  return found
}

/** A folder holding initdb and postgres: on the PATH, or Debian's newest /usr/lib/postgresql/N/bin. */
function findPostgres() {
  const debian = existsSync('/usr/lib/postgresql')
    ? readdirSync('/usr/lib/postgresql')
        .filter((version) => /^\d+$/.test(version))
        .sort((a, b) => Number(b) - Number(a))
        .map((version) => `/usr/lib/postgresql/${version}/bin`)
    : []
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), ...debian]
  return dirs.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres')))
}

function findOnPath(name) {
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/sbin', '/usr/bin']
  const dir = dirs.find((each) => existsSync(join(each, name)))
  return dir === undefined ? undefined : join(dir, name)
}

function advice(wanted, missing, binaries, own) {
  const what = { postgres: 'PostgreSQL (initdb, postgres)', redis: 'Redis (redis-server)' }
  const absent = missing.filter((name) => binaries[name] === undefined)
  return [
    own
      ? "TOLLGATE_TEST_OWN_SERVERS=1 asks for a PostgreSQL and a Redis of the run's own,"
      : `the tests need PostgreSQL and Redis: nothing answers at ${missing.map((name) => redact(wanted[name])).join(' or ')},`,
    `and ${absent.map((name) => what[name]).join(' and ')} ${absent.length > 1 ? 'are' : 'is'} not installed to start one`,
    '(npm test installs them with apt-get only as root on Debian). Either install them (Debian/Ubuntu:',
    'sudo apt-get install -y postgresql redis-server), and npm test starts servers of its own; or point the',
    'tests at running servers:',
    '  TOLLGATE_TEST_POSTGRES_URL=postgres://USER[:PASSWORD]@HOST:PORT/DATABASE  (USER may create schemas',
    '    and databases; default postgres://postgres@127.0.0.1:5432/test)',
    '  TOLLGATE_TEST_REDIS_URL=redis://[:PASSWORD@]HOST:PORT[/DB]  (default redis://127.0.0.1:6379)',
    'The tests that need them fail until then.',
  ].join('\n')
}

/**
 * A PostgreSQL of the run's own: initdb (trust auth, superuser postgres) in `folder`/postgres, the
 * server on a free port of 127.0.0.1 without fsync, and the database the wanted URL names. As root it
 * runs as the postgres user (nobody without one): postgres refuses to run as root.
 */
async function startPostgres(bin, folder, wantedUrl) {
  const data = join(folder, 'postgres')
  mkdirSync(data, { recursive: true })
  const owner = process.getuid?.() === 0 ? (userIds('postgres') ?? { uid: 65534, gid: 65534 }) : {}
  if (owner.uid !== undefined) {
    chmodSync(folder, 0o755)
    chownSync(data, owner.uid, owner.gid)
  }
  const initdb = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
    { ...owner, encoding: 'utf8' },
  )
  if (initdb.status !== 0) throw new Error(`initdb failed: ${initdb.stderr || initdb.error}`)
  const port = await freePort()
  const server = await startServer(
    'PostgreSQL',
    join(bin, 'postgres'),
    [
      '-D',
      data,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${data}`,
    ].concat(['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
    { ...owner, folder, readyLine: 'database system is ready to accept connections', stopSignal: 'SIGINT' },
  )
  const database = decodeURIComponent(new URL(wantedUrl).pathname.slice(1)) || 'postgres'
  const url = `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(database)}`
  if (database !== 'postgres') {
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` })
    try {
      await client.connect()
      await client.query(`CREATE DATABASE "${database.replaceAll('"', '""')}"`)
    } catch (err) {
      await server.stop()
      throw err
    } finally {
      await client.end().catch(() => undefined)
    }
  }
  return { ...server, url }
}

/** A redis-server of the run's own on a free port: nothing saved, the DB index the wanted URL names. */
async function startRedis(bin, folder, wantedUrl) {
  const data = join(folder, 'redis')
  mkdirSync(data, { recursive: true })
  const port = await freePort()
  const server = await startServer(
    'Redis',
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', data],
    { folder, readyLine: 'Ready to accept connections', stopSignal: 'SIGTERM' },
  )
  return { ...server, url: `redis://127.0.0.1:${port}${new URL(wantedUrl).pathname.replace(/^\/$/, '')}` }
}

/**
 * Starts a server and waits for the line that says it is ready (on stdout or stderr). Its PID is kept
 * in `folder` (`<title>.pid`), for a later run to stop it if this one was killed before it could.
 */
function startServer(title, command, args, { uid, gid, folder, readyLine, stopSignal }) {
  // a group of its own: a Ctrl-C stops the tests, and this run then stops the server
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    ...(uid !== undefined && { uid, gid }),
  })
  if (child.pid !== undefined) writeFileSync(join(folder, `${title}.pid`), String(child.pid))
  let output = ''
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill(stopSignal)
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(timer)
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop()
      reject(new Error(`${title} did not start within 60 s:\n${output}`))
    }, 60_000)
    const read = (chunk) => {
      output += chunk
      if (!output.includes(readyLine)) return
      clearTimeout(timer)
      child.stdout.off('data', read)
      child.stderr.off('data', read)
      // read on, so that a full pipe never holds the server up
      child.stdout.resume()
      child.stderr.resume()
      resolve({ title, pid: child.pid, stop })
    }
    child.stdout.setEncoding('utf8').on('data', read)
    child.stderr.setEncoding('utf8').on('data', read)
    child.once('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`${title} exited (${signal ?? code}) before it was ready:\n${output}`))
    })
  })
}

function userIds(name) {
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' })
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' })
  if (uid.status !== 0 || gid.status !== 0) return undefined
  return { uid: Number(uid.stdout), gid: Number(gid.stdout) }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** Servers and folders of earlier runs killed before they could stop them (their runner is gone). */
function removeLeftovers() {
  for (const name of readdirSync(tmpdir())) {
    const runner = Number(name.slice(folderPrefix.length))
    if (!name.startsWith(folderPrefix) || !Number.isInteger(runner) || isAlive(runner)) continue
    const folder = join(tmpdir(), name)
    for (const [file, command] of [
      ['PostgreSQL.pid', 'postgres'],
      ['Redis.pid', 'redis-server'],
    ]) {
      const pid = Number(readOr(join(folder, file)))
      if (pid > 0 && readOr(`/proc/${pid}/comm`).trim() === command) process.kill(pid, 'SIGKILL')
    }
    rmSync(folder, { recursive: true, force: true })
  }
}

/** Whether process `pid` is running (one of another user's too). */
export function isAlive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return err.code === 'EPERM'
  }
}

function readOr(path) {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}
