import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { NoActiveKeyError } from './adminErrors.ts'
import { ProjectSettingsError } from './authErrors.ts'
import { UnsupportedChainIdError } from './gasErrors.ts'
import { MetricsTokenRequiredError, RouteNotFoundError } from './httpErrors.ts'
import { BalanceUnavailableError, DailyLimitError, RateLimitError, rateLimitEvents } from './limitErrors.ts'
import { InvalidParamsError } from './rpcErrors.ts'
import { NetworkReconfiguredError, ShuttingDownError } from './socketErrors.ts'
import { TollgateError } from './TollgateError.ts'
import { toCloseFrame, toWireError, type WireSurface } from './toWireError.ts'

type ErrorClass = new (...args: never[]) => TollgateError

/** What every module of errors/ exports: an error file added later is read too. */
const exported = await Promise.all(
  readdirSync(import.meta.dirname)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .map((file): Promise<Record<string, unknown>> => import(`./${file}`)),
)

const classes = exported
  .flatMap((module) => Object.entries(module))
  .filter(
    (entry): entry is [string, ErrorClass] =>
      typeof entry[1] === 'function' &&
      (entry[1] === TollgateError || entry[1].prototype instanceof TollgateError),
  )

/**
 * Sample arguments for every class, as docs/errors.md's examples show them: each sample's message
 * must be one of its row's `quoted` messages. A class missing here fails the test.
 */
const samples: Record<string, unknown[][]> = {
  MissingKeyError: [[]],
  MissingGasApiKeyError: [[]],
  InvalidKeyError: [[]],
  InvalidSecretError: [[]],
  InvalidJwtError: [[]],
  ProjectSettingsError: [[]],
  DailyLimitError: [[5_000]],
  RateLimitError: [
    ['planCreditsPerSecond', 500],
    ['keyCreditsPerSecond', 500],
    ['keyCreditsPerDay', 60_000],
  ],
  AuthRateLimitError: [[1_000]],
  AccountApiRateError: [[400]],
  RefusalsLeftOutError: [[12]],
  CallsInFlightLimitError: [[32]],
  ParseError: [[]],
  InvalidRequestError: [[], ['empty batch'], ['batch too large']],
  MethodNotFoundError: [['X']],
  NotificationsNotSupportedError: [[]],
  SubscriptionLimitError: [[100]],
  InFlightLimitError: [[64]],
  ResponseTooLargeError: [[32 * 1024 * 1024]],
  ServerBusyError: [[]],
  InvalidParamsError: [['invalid argument N: <why>']],
  ParamLimitError: [[0, 'too many addresses, the limit is 1000']],
  LogResultsLimitError: [[10_000, [0x10n, 0x5fn]]],
  FilterNotFoundError: [[]],
  BodyTooLargeError: [[5_242_880]],
  BodyStalledError: [[65_536, 5_000]],
  UnsupportedContentTypeError: [[]],
  RouteNotFoundError: [[]],
  HttpMethodNotAllowedError: [[], ['GET']],
  UpgradeRequiredError: [[]],
  UnknownNetworkError: [[]],
  UpstreamUnavailableError: [[]],
  UpstreamTimeoutError: [[], [undefined, true]],
  MalformedUpstreamAnswerError: [[]],
  ReceiptNotReadyError: [['0x…']],
  BalanceUnavailableError: [[]],
  InternalError: [[]],
  UnknownGasEndpointError: [['x']],
  UnsupportedChainIdError: [['6001']],
  NoBaseFeeError: [[61]],
  FeeHistoryLoadingError: [[1]],
  AdminTokenRequiredError: [[]],
  SignInLinkError: [[]],
  AdminRequestError: [['the body is not JSON']],
  UnknownAllowlistKindError: [['x', 'contracts, user-agents, origins, methods']],
  KeyAdminError: [['a key can require a secret or a JWT, not both']],
  NoActiveKeyError: [[]],
  NoAccountError: [[]],
  AccountTokenRequiredError: [[]],
  AlertSettingsError: [['a webhook URL is needed to turn alerts on (webhook, --webhook)']],
  AccountCsrfError: [[]],
  OidcStateError: [[]],
  OidcProviderDeniedError: [[]],
  OidcAnswerRejectedError: [[]],
  OidcNoAccountError: [['tollgate_account']],
  OidcAmbiguousAccountError: [['tollgate_account']],
  OidcProviderUnavailableError: [[]],
  KeyConflictError: [["account 'acme' already exists"], ["no account named 'acme'"]],
  AllowlistEntryError: [["'0x12' is not a 20-byte 0x address"], ['a user agent entry cannot be empty']],
  MetricsTokenRequiredError: [[]],
  DashboardNotBuiltError: [[]],
  KeyRevokedError: [[]],
  JwtExpiredError: [[]],
  NotificationUnpaidError: [[]],
  SlowReaderError: [[]],
  ShuttingDownError: [[]],
  NetworkReconfiguredError: [[]],
}

/** Where docs/errors.md lists an error: a wire surface, or the close frames of open WebSockets. */
type DocSurface = WireSurface | 'websocket'

type DocRow = {
  surface: DocSurface
  /** The HTTP status, or on `websocket` the close code. */
  httpStatus: number
  code: number | undefined
  row: string
  messages: string[]
}
type DocExample = { surface: WireSurface; body: unknown }

/**
 * docs/errors.md by surface: each `<!-- surface: x -->` marker starts that surface's section, whose
 * first ```json block is its example body and whose table rows (`| SomeError | HTTP | [code |] message | when |`)
 * are its errors; the `websocket` section's rows are `| SomeError | close code | reason | when |`.
 */
function readDocs(): { rows: Map<string, DocRow[]>; examples: DocExample[] } {
  const lines = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8').split('\n')
  const rows = new Map<string, DocRow[]>()
  const examples: DocExample[] = []
  let surface: DocSurface | undefined
  let columns: string[] = []
  let exampleNeeded = false
  lines.forEach((line, index) => {
    const marker = /^<!-- surface: (jsonrpc|gas|admin|websocket) -->$/.exec(line)
    if (marker) {
      surface = marker[1] as DocSurface
      exampleNeeded = surface !== 'websocket'
      return
    }
    if (surface && exampleNeeded && line === '```json') {
      examples.push({ surface: surface as WireSurface, body: JSON.parse(lines[index + 1] ?? '') })
      exampleNeeded = false
      return
    }
    if (!surface || !line.startsWith('|')) return
    const cells = line.split(/(?<!`[^`|]*)\|/).map((cell) => cell.trim())
    if (cells[1] === 'error') {
      columns = cells
      return
    }
    const name = cells[1] ?? ''
    if (!/^[A-Z]\w+Error$/.test(name)) return
    const cell = (column: string) => cells[columns.indexOf(column)] ?? ''
    const entry: DocRow = {
      surface,
      httpStatus: Number(surface === 'websocket' ? cell('close code') : cell('HTTP')),
      code: columns.includes('code') ? Number(cell('code')) : undefined,
      row: line,
      messages: [...cell(surface === 'websocket' ? 'reason' : 'message').matchAll(/`([^`]+)`/g)].map(
        (match) => match[1] as string,
      ),
    }
    rows.set(name, [...(rows.get(name) ?? []), entry])
  })
  return { rows, examples }
}

describe('errors and docs/errors.md', () => {
  const docs = readDocs()

  it('every error class has sample arguments, and every sample names a class', () => {
    const names = classes.map(([name]) => name).filter((name) => name !== 'TollgateError')
    assert.deepEqual(Object.keys(samples).sort(), names.sort())
  })

  it('every error class is documented on a surface with its HTTP status, code and message; every documented one exists', () => {
    for (const [name, ErrorClass] of classes) {
      if (name === 'TollgateError') continue
      const documented = docs.rows.get(name)
      assert.ok(documented, `${name} is not in docs/errors.md`)
      for (const args of samples[name] ?? []) {
        const instance = new ErrorClass(...(args as never[]))
        for (const entry of documented) {
          const where = `${name}(${args.join(', ')}) on ${entry.surface}`
          if (entry.surface === 'websocket') {
            const frame = toCloseFrame(instance)
            assert.equal(entry.httpStatus, frame.code, where)
            assert.ok(entry.messages.includes(frame.reason), `${where}: \`${frame.reason}\` not in its row`)
            continue
          }
          const { httpStatus, error } = toWireError(instance, entry.surface)
          assert.equal(entry.httpStatus, httpStatus, where)
          if (entry.code !== undefined) assert.equal(entry.code, error.code, where)
          assert.ok(
            entry.messages.includes(instance.message),
            `${where}: \`${instance.message}\` not in its row`,
          )
          // the 402/429 extras: the row gives each event code; the JSON-RPC row also each details text
          for (const [field, value] of Object.entries(instance.wireFields ?? {})) {
            if (field === 'event' || entry.surface === 'jsonrpc')
              assert.ok(entry.row.includes(String(value)), `${where}: ${field} ${value} not in its row`)
          }
        }
      }
    }
    const known = new Set(classes.map(([name]) => name))
    for (const name of docs.rows.keys())
      assert.ok(known.has(name), `docs/errors.md lists ${name}, no such class`)
  })

  it("each surface's example body in docs/errors.md is what toWireError answers", () => {
    assert.deepEqual(
      docs.examples.map((example) => example.surface),
      ['jsonrpc', 'gas', 'admin'],
    )
    const [jsonrpc, gas, admin] = docs.examples
    assert.deepEqual(
      toWireError(
        new InvalidParamsError('invalid argument 0: expected a 32-byte 0x-prefixed hex hash'),
        'jsonrpc',
        1,
      ).body,
      jsonrpc?.body,
    )
    assert.deepEqual(toWireError(new UnsupportedChainIdError('6001'), 'gas').body, gas?.body)
    assert.deepEqual(toWireError(new NoActiveKeyError(), 'admin').body, admin?.body)
  })

  it('toWireError: the body of each surface, in the key order clients see, and its headers', () => {
    const limit = new RateLimitError('planCreditsPerSecond', 1_500)
    const { details } = rateLimitEvents.planCreditsPerSecond
    assert.equal(
      JSON.stringify(toWireError(limit, 'jsonrpc', 7).body),
      `{"jsonrpc":"2.0","id":7,"error":{"code":429,"message":"Too Many Requests","event":-33200,"details":"${details}"}}`,
    )
    assert.deepEqual(toWireError(limit, 'jsonrpc').headers, { 'retry-after': '2' })
    assert.equal(
      JSON.stringify(toWireError(limit, 'gas').body),
      `{"statusCode":429,"message":"Too Many Requests","event":-33200,"details":"${details}"}`,
    )
    assert.deepEqual(toWireError(limit, 'admin'), {
      httpStatus: 429,
      body: { error: { message: 'Too Many Requests' } },
      headers: { 'retry-after': '2' },
      error: { code: 429, message: 'Too Many Requests', ...rateLimitEvents.planCreditsPerSecond },
    })
    assert.deepEqual(toWireError(new DailyLimitError(10), 'gas').headers, { 'retry-after': '1' }, 'never 0')
    assert.deepEqual(toWireError(new MetricsTokenRequiredError(), 'jsonrpc').headers, {
      'www-authenticate': 'Bearer realm="metrics"',
    })
    assert.equal(
      JSON.stringify(toWireError(new RouteNotFoundError(), 'jsonrpc').body),
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"not found"}}',
    )
  })

  it('toWireError: anything that is not a TollgateError is a 500 without details, on every surface', () => {
    const bug = new Error('ECONNREFUSED http://user:secret@10.0.0.1')
    assert.equal(
      JSON.stringify(toWireError(bug, 'jsonrpc').body),
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}',
    )
    assert.deepEqual(toWireError(bug, 'gas').body, { statusCode: 500, message: 'internal error' })
    assert.deepEqual(toWireError(bug, 'admin').body, { error: { message: 'internal error' } })
    for (const surface of ['jsonrpc', 'gas', 'admin'] as const) {
      assert.equal(toWireError(bug, surface).httpStatus, 500)
      assert.deepEqual(toWireError(bug, surface).headers, {})
    }
  })

  it('Retry-After: whole seconds, never 0', () => {
    const rate = toWireError(new RateLimitError('planCreditsPerSecond', 1_500), 'jsonrpc')
    assert.equal(rate.headers['retry-after'], '2')
    assert.equal(toWireError(new DailyLimitError(10), 'gas').headers['retry-after'], '1')
    assert.deepEqual(toWireError(new InvalidParamsError('invalid argument 0: nope'), 'jsonrpc', 3), {
      httpStatus: 200,
      body: { jsonrpc: '2.0', id: 3, error: { code: -32602, message: 'invalid argument 0: nope' } },
      headers: {},
      error: { code: -32602, message: 'invalid argument 0: nope' },
    })
  })
})

describe('toCloseFrame', () => {
  it('1001 when the gateway stops, 1011 for its own failures, 1008 for refusals; the message as the reason', () => {
    assert.deepEqual(toCloseFrame(new ShuttingDownError()), {
      code: 1001,
      reason: 'server restarting, reconnect',
    })
    assert.deepEqual(toCloseFrame(new NetworkReconfiguredError()), {
      code: 1001,
      reason: 'network reconfigured, reconnect',
    })
    assert.deepEqual(toCloseFrame(new Error('a bug')), { code: 1011, reason: 'internal error' })
    assert.deepEqual(toCloseFrame(new BalanceUnavailableError()), {
      code: 1011,
      reason: 'credit balance unavailable, try again later',
    })
    assert.deepEqual(toCloseFrame(new ProjectSettingsError()), {
      code: 1008,
      reason: 'rejected due to project ID settings',
    })
  })

  it('cuts a reason to the 123 bytes a close frame holds, never inside a character', () => {
    const { reason } = toCloseFrame(new InvalidParamsError('é'.repeat(100)))
    assert.equal(reason, 'é'.repeat(61))
    // 4 bytes each, two UTF-16 units: 30 fit (120 bytes), and no half of the 31st is left
    const emoji = toCloseFrame(new InvalidParamsError('😀'.repeat(40))).reason
    assert.equal(emoji, '😀'.repeat(30))
  })
})
