import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { createTestSchema, type TestSchema } from './helpers/createTestSchema.ts'
import { bin } from './helpers/gatewayProcess.ts'

const run = promisify(execFile)

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`tollgate accounts alerts on ${backend}`, () => {
    let dir: string
    let config: string[]
    let tollgate: (args: string[]) => Promise<{ stdout: string; stderr: string }>
    let schema: TestSchema | undefined
    const json = async (args: string[]) =>
      JSON.parse((await tollgate(['accounts', 'alerts', ...args, '--json', ...config])).stdout) as Record<
        string,
        unknown
      >

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'tollgate-alerts-cli-'))
      const configFile = join(dir, 'tollgate.yaml')
      schema = backend === 'postgres' ? await createTestSchema() : undefined
      const storage = schema ? `postgres: '${schema.url}'` : `sqlite: ${join(dir, 'tollgate.db')}`
      writeFileSync(configFile, `storage:\n  ${storage}\n`)
      config = ['--config', configFile]
      const env = { ...process.env }
      delete env.TOLLGATE_CONFIG
      delete env.TOLLGATE_POSTGRES_URL
      tollgate = (args) => run(process.execPath, [bin, ...args], { env })
      await tollgate(['keys', 'create', '--account', 'acme', '--name', 'web', ...config])
    })
    after(async () => {
      await schema?.drop()
      rmSync(dir, { recursive: true, force: true })
    })

    it('--webhook turns alerts on and prints the signing secret once; a change prints none', async () => {
      assert.deepEqual(await json(['acme']), { account: 'acme', enabled: false })
      const made = await json(['acme', '--webhook', 'https://hooks.example/acme'])
      assert.match(made.secret as string, /^tgw_[0-9a-f]{64}$/)
      assert.deepEqual(made.thresholds, [50, 75, 90, 100])
      assert.equal(made.format, 'json')
      const changed = await json(['acme', '--at', '90,50', '--format', 'slack'])
      assert.equal(changed.secret, null)
      assert.deepEqual(changed.thresholds, [50, 90])
      assert.equal(changed.webhook, 'https://hooks.example/acme')
      const { updatedAt: _, ...shown } = await json(['acme'])
      assert.deepEqual(shown, {
        account: 'acme',
        enabled: true,
        webhook: 'https://hooks.example/acme',
        thresholds: [50, 90],
        format: 'slack',
      })
      const rotated = await json(['acme', '--rotate-secret'])
      assert.match(rotated.secret as string, /^tgw_[0-9a-f]{64}$/)
      assert.notEqual(rotated.secret, made.secret)
      if (backend === 'sqlite') {
        // sealed: the secret is nowhere in the database file
        const file = readFileSync(join(dir, 'tollgate.db'))
        assert.equal(file.includes((rotated.secret as string).slice(4)), false)
      }
      const text = (await tollgate(['accounts', 'alerts', 'acme', '--rotate-secret', ...config])).stdout
      assert.match(text, /signing secret: tgw_[0-9a-f]{64} {3}\(shown once: store it now\)/)
    })

    it('the delivery log; --off turns them off', async () => {
      assert.deepEqual(await json(['acme', '--deliveries']), { account: 'acme', deliveries: [] })
      assert.deepEqual(await json(['acme', '--off']), { account: 'acme', enabled: false, turnedOff: true })
      assert.deepEqual(await json(['acme', '--off']), { account: 'acme', enabled: false, turnedOff: false })
    })

    it('refused: a webhook that is not http(s), thresholds that are not percents, an unknown account', async () => {
      for (const args of [
        ['acme', '--webhook', 'ftp://hooks.example'],
        ['acme', '--webhook', 'https://user:pw@hooks.example'],
        ['acme', '--webhook', 'https://hooks.example', '--at', '0,101'],
        ['acme', '--at', '50'],
        ['nobody', '--webhook', 'https://hooks.example'],
      ]) {
        await assert.rejects(
          tollgate(['accounts', 'alerts', ...args, ...config]),
          (err: { code: number; stderr: string }) => {
            assert.ok(err.code === 1 || err.code === 2, `${args.join(' ')}: exit ${err.code}`)
            assert.notEqual(err.stderr, '')
            return true
          },
        )
      }
    })
  })
}
