import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

/** Debian's Chromium (`apt-get install -y chromium`); scripts/ensureChromium.js installs it for `npm test`. */
const chromiumPath = process.env.TOLLGATE_CHROMIUM ?? '/usr/bin/chromium'

/**
 * Headless Chromium for browser tests. The flags keep it off the network (this machine's is closed,
 * and a test must not depend on anything beyond 127.0.0.1).
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(`no Chromium at ${chromiumPath}: apt-get install -y chromium (or set TOLLGATE_CHROMIUM)`)
  }
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}
