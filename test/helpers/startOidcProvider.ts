import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import Provider from 'oidc-provider'

export type TestOidcProvider = {
  /** `http://127.0.0.1:<port>`: the issuer, as its discovery document states it. */
  issuer: string
  clientId: string
  clientSecret: string
  close(): Promise<void>
}

export type TestOidcProviderOptions = {
  /** The client's one registered redirect URI (the gateway's callback). */
  redirectUrl: string
  /** Who may sign in: a login name (any password is taken) and the claims the provider gives them. */
  people: Record<string, Record<string, unknown>>
  /** Scope that grants the people's claims (asked for by the gateway). */
  scope: string
}

/**
 * A real OpenID Connect provider (the `oidc-provider` package, its development login and consent
 * pages) on 127.0.0.1 at a free port, with one confidential client. PKCE is required of every
 * client: an authorization request without an S256 challenge is refused, and so is a code
 * exchanged without its verifier.
 */
export async function startOidcProvider(options: TestOidcProviderOptions): Promise<TestOidcProvider> {
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end()
  const server = createServer((req, res) => handle(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const issuer = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  const clientId = 'tollgate'
  const clientSecret = randomBytes(24).toString('base64url')
  const claimNames = [...new Set(Object.values(options.people).flatMap((claims) => Object.keys(claims)))]
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUrl],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ['sub'], [options.scope]: claimNames },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, id) {
      const claims = options.people[id]
      if (!claims) return undefined
      return { accountId: id, claims: async () => ({ sub: id, ...claims }) }
    },
  })
  const callback = provider.callback()
  handle = (req, res) => void callback(req, res)
  return {
    issuer,
    clientId,
    clientSecret,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
