import type { AccessPolicy } from '../auth/accessPolicy.ts'
import { type AuthenticateDeps, type Authentication, authenticate } from '../auth/authenticate.ts'
import { authorizeRequest, type CallGuard } from '../auth/authorize.ts'
import type { KeyEntry, KeyRegistry } from '../auth/createKeyRegistry.ts'
import { InvalidKeyError, MissingKeyError } from '../errors/authErrors.ts'
import type { TollgateError } from '../errors/TollgateError.ts'
import { UnknownNetworkError } from '../errors/upstreamErrors.ts'
import type { Network } from '../networks/createNetwork.ts'
import type { NetworkRegistry } from '../networks/createNetworkRegistry.ts'

/** What a keyed request (HTTP POST or WebSocket upgrade) says about who sends it and where it goes. */
export type KeyRequest = {
  /** The key from the path; empty when the path had none. */
  key: string
  /** The `/{network}/...` prefix, if the path had one. */
  networkName: string | undefined
  host: string | undefined
  authorization: string | undefined
  /** The socket's remote address: failed authentications are counted per client address. */
  clientAddress: string | undefined
  /**
   * What its body and answers count against in the process's bounds on bytes in flight (ByteBulkhead
   * shares): its key, and its client address unless that is exempt. Empty where nothing is held.
   */
  shares: readonly string[]
  origin: string | undefined
  userAgent: string | undefined
  /** The `Enable-Failover` header. */
  enableFailover: string | undefined
  /**
   * Every header of the request, read only where one is needed: `traceparent` and `tracestate`
   * when tracing is on, `x-tollgate-route` for a key whose route header is `asked`.
   */
  headers: Readonly<Record<string, string | string[] | undefined>> | undefined
}

export type KeyRequestDeps = AuthenticateDeps & { keys: KeyRegistry; networks: NetworkRegistry }

/**
 * What a keyed request may do. A refusal is a request that has not proved what its key requires
 * (its secret, its JWT, its origin, user-agent and network rules): it costs the key nothing and shows
 * nothing of it (no credit headers), whatever it sends.
 */
export type KeyRequestAccess =
  | {
      ok: true
      key: KeyEntry
      network: Network
      guard: CallGuard | undefined
      failover: boolean
      /** When the request's JWT expires (ms since the epoch); undefined without one. */
      tokenExpiresMs: number | undefined
    }
  | {
      ok: false
      error: unknown
      /** The key, when it exists and the request named it (the request log keeps its refusals). */
      key?: KeyEntry
    }

/**
 * Where a request goes: its network, if known, and what refuses it once the client has proved it
 * holds the key, when it cannot go there. JSON-RPC and WebSocket upgrades name the network by path
 * or host (lookUpNetwork); the Gas API by chain id and endpoint.
 */
export type RequestTarget = { network: Network | undefined; refusal: TollgateError | undefined }

/** What a request without an Authorization header proves. */
const anonymous: Authentication = { secretVerified: false, claims: undefined }

/**
 * What an unknown (or revoked) key is checked as: a key that requires its secret and has none, and
 * no JWT keys. Whatever a request sends, it is refused as such a key refuses it, and a key that
 * requires its secret or a JWT refuses a request that has not proved it the same way (authenticate):
 * a stranger cannot tell such a key from one that does not exist.
 */
const unknownKeyAccess: AccessPolicy = {
  networks: undefined,
  origins: [],
  userAgents: [],
  methods: undefined,
  contracts: undefined,
  hasAllowlists: false,
  secretHash: undefined,
  requireSecret: true,
  jwt: { required: false, audience: undefined, keys: new Map() },
}

/**
 * The checks every keyed request passes before its calls run (HTTP, WebSocket upgrades and the Gas
 * API alike): the key, what the request proves (secret, JWT: verified only when the request sends
 * credentials or the key requires them), where it goes (`target`: by default the network of its path
 * or host), and the key's network, origin and user-agent rules. Decided at once (no promise) for a
 * request with nothing to verify, as most are; a promise while its credentials are verified.
 */
export function authorizeKeyRequest(
  deps: KeyRequestDeps,
  request: KeyRequest,
  target?: RequestTarget,
): KeyRequestAccess | Promise<KeyRequestAccess> {
  if (request.key === '') return { ok: false, error: new MissingKeyError() }
  const key = deps.keys.findActiveKey(request.key)
  if (!key) return refuseUnknownKey(deps, request)
  if (request.authorization !== undefined || key.access.requireSecret || key.access.jwt.required)
    return authenticated(deps, key, request, target)
  return authorize(key, anonymous, request, target ?? lookUpNetwork(deps, request))
}

/** A request with credentials to verify (or a key that requires them): authorized once they are. */
async function authenticated(
  deps: KeyRequestDeps,
  key: KeyEntry,
  request: KeyRequest,
  target: RequestTarget | undefined,
): Promise<KeyRequestAccess> {
  let auth: Authentication
  try {
    auth = await authenticate(key, request, deps)
  } catch (error) {
    return { ok: false, error, key }
  }
  // looked up once the request is verified: a reload meanwhile sends it to the network now configured
  return authorize(key, auth, request, target ?? lookUpNetwork(deps, request))
}

/**
 * An unknown key, authenticated as `unknownKeyAccess`: always refused, with what a key that requires
 * its secret answers. Failures count against the key's value (a number made from it: no real key
 * has a negative id), as they would against a key that exists.
 */
async function refuseUnknownKey(deps: KeyRequestDeps, request: KeyRequest): Promise<KeyRequestAccess> {
  const stranger = { apiKey: { id: unknownKeyId(request.key), key: request.key }, access: unknownKeyAccess }
  try {
    await authenticate(stranger, request, deps)
  } catch (error) {
    return { ok: false, error }
  }
  return { ok: false, error: new InvalidKeyError() }
}

/** A negative number from a key's value (FNV-1a), so its failures have a bucket of their own. */
function unknownKeyId(key: string): number {
  let hash = 0x811c9dc5
  for (let index = 0; index < key.length; index++) {
    hash = Math.imul(hash ^ key.charCodeAt(index), 0x01000193)
  }
  return -1 - (hash >>> 0)
}

/** What the key allows a request that has proved `auth`, going to `target`. */
function authorize(
  key: KeyEntry,
  auth: Authentication,
  request: KeyRequest,
  target: RequestTarget,
): KeyRequestAccess {
  const { network } = target
  try {
    if (target.refusal) throw target.refusal
    if (!network) throw new UnknownNetworkError()
    const guard = authorizeRequest(key, auth, {
      networkName: network.name,
      origin: request.origin,
      userAgent: request.userAgent,
    })
    // docs/compatibility.md §7: a plan with failover, and the request's header or the key's switch
    const failover =
      key.failoverAllowed &&
      (key.apiKey.settings.failover || request.enableFailover?.toLowerCase() === 'true')
    return { ok: true, key, network, guard, failover, tokenExpiresMs: auth.claims?.expiresMs }
  } catch (error) {
    return { ok: false, error, key }
  }
}

/** The network of a request's path prefix or Host header. */
function lookUpNetwork(deps: KeyRequestDeps, request: KeyRequest): RequestTarget {
  const network = deps.networks.resolve(request.networkName, request.host)
  return { network, refusal: network ? undefined : new UnknownNetworkError() }
}
