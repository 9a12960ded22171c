import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { after, describe, it } from 'node:test'
import { configSchema } from '../config/configSchema.ts'
import { OidcProviderUnavailableError } from '../errors/oidcErrors.ts'
import { createOidcClient } from './createOidcClient.ts'

const part = () => randomBytes(32).toString('base64url')
const pending = { state: part(), nonce: part(), codeVerifier: part(), expiresAtMs: Date.now() + 60_000 }

function oidcConfig(issuer: string) {
  const config = configSchema.shape.accounts.parse({
    oidc: {
      issuer,
      clientId: 'tollgate',
      redirectUrl: 'https://tollgate.example/account/api/oidc/callback',
      timeoutSeconds: 1,
    },
  })
  return config.oidc as NonNullable<typeof config.oidc>
}

const listening = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      resolve(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`)
    }),
  )

describe('createOidcClient: a provider that does not answer as one', () => {
  const requests: string[] = []
  // accepts, counts and never answers discovery; answers anything else with a 500
  const server = createServer((req, res) => {
    requests.push(req.url ?? '')
    if (!req.url?.startsWith('/hang/')) res.writeHead(500).end('down')
  })
  const base = listening(server)
  after(() => {
    server.closeAllConnections()
    server.close()
  })

  it('refused connections, a 5xx and no answer within timeoutSeconds are OidcProviderUnavailableError; a failure is not kept, the next sign-in asks again', async () => {
    const closed = createServer()
    const closedUrl = await listening(closed)
    await new Promise((resolve) => closed.close(resolve))
    for (const issuer of [closedUrl, `${await base}/error`, `${await base}/hang`]) {
      const client = createOidcClient(oidcConfig(issuer), Date.now)
      await assert.rejects(client.authorizationUrl(pending), OidcProviderUnavailableError, issuer)
    }
    const before = requests.length
    const client = createOidcClient(oidcConfig(`${await base}/error`), Date.now)
    await assert.rejects(client.authorizationUrl(pending), OidcProviderUnavailableError)
    await assert.rejects(client.authorizationUrl(pending), OidcProviderUnavailableError)
    assert.equal(requests.length - before, 2)
  })

  it('sign-ins at once while discovery is under way share its one request', async () => {
    const client = createOidcClient(oidcConfig(`${await base}/hang`), Date.now)
    const before = requests.length
    const results = await Promise.allSettled([1, 2, 3].map(() => client.authorizationUrl(pending)))
    assert.ok(results.every((result) => result.status === 'rejected'))
    assert.equal(requests.length - before, 1)
  })
})
