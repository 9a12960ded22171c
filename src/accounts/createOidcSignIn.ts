import type { Buffer } from 'node:buffer'
import type { Logger } from 'pino'
import type { KeyStore } from '../auth/keyStore.ts'
import type { OidcConfig } from '../config/accountsSchema.ts'
import { TollgateError } from '../errors/TollgateError.ts'
import type { OidcSignIn } from './accountApiTypes.ts'
import { createOidcClient } from './createOidcClient.ts'
import { oidcStateMacKey } from './oidcStateCookie.ts'

/**
 * Sign-in through the configured identity provider, for the account API: its client, the state
 * cookie's key (from the database's hash key, so every instance shares it) and the log of refusals
 * (the person sees a short message; the operator reads why here).
 */
export function createOidcSignIn(
  config: OidcConfig,
  deps: { secretHashKey: Buffer; keys: Pick<KeyStore, 'getAccount'>; now: () => number; log: Logger },
): OidcSignIn {
  const { log } = deps
  return {
    client: createOidcClient(config, deps.now),
    claim: config.claim,
    stateMacKey: oidcStateMacKey(deps.secretHashKey),
    secure: new URL(config.redirectUrl).protocol === 'https:',
    findAccount: (name) => deps.keys.getAccount(name),
    onRefused(err) {
      const known = err instanceof TollgateError ? err : undefined
      const fields = { err, reason: known?.logDetails, status: known?.httpStatus }
      if (!known || known.httpStatus >= 500) log.warn(fields, 'sign-in through the identity provider failed')
      else log.info(fields, 'sign-in through the identity provider refused')
    },
  }
}
