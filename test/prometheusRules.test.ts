import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { parse } from 'yaml'

/** Debian's prometheus package has it (`apt-get install -y prometheus`); scripts/ensurePromtool.js installs it for `npm test`. */
const promtool = process.env.TOLLGATE_PROMTOOL ?? '/usr/bin/promtool'
const rulesDir = join(import.meta.dirname, '..', 'deploy', 'prometheus')

function runPromtool(args: string[]): string {
  if (!existsSync(promtool)) {
    assert.fail(`no promtool at ${promtool}: apt-get install -y prometheus (or set TOLLGATE_PROMTOOL)`)
  }
  const result = spawnSync(promtool, args, { cwd: rulesDir, encoding: 'utf8' })
  const output = `${result.stdout}${result.stderr}`
  assert.equal(result.status, 0, `promtool ${args.join(' ')} failed:\n${output}`)
  return output
}

type RuleTest = { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }

describe('deploy/prometheus', () => {
  it('alerts.yml passes promtool check rules', () => {
    assert.match(runPromtool(['check', 'rules', 'alerts.yml']), /SUCCESS/)
  })

  it('alerts.test.yml passes promtool test rules', () => {
    assert.match(runPromtool(['test', 'rules', 'alerts.test.yml']), /SUCCESS/)
  })

  it('tests every alert both firing and not firing', () => {
    const rules = parse(readFileSync(join(rulesDir, 'alerts.yml'), 'utf8')) as {
      groups: { rules: { alert?: string }[] }[]
    }
    const alerts = rules.groups.flatMap((group) => group.rules.flatMap((rule) => rule.alert ?? []))
    const tests = (parse(readFileSync(join(rulesDir, 'alerts.test.yml'), 'utf8')) as { tests: RuleTest[] })
      .tests
    const checks = tests.flatMap((test) => test.alert_rule_test ?? [])
    for (const alert of alerts) {
      const own = checks.filter((check) => check.alertname === alert)
      assert.ok(
        own.some((check) => (check.exp_alerts ?? []).length > 0),
        `${alert} is tested firing`,
      )
      assert.ok(
        own.some((check) => (check.exp_alerts ?? []).length === 0),
        `${alert} is tested not firing`,
      )
    }
    assert.ok(alerts.length >= 8)
  })
})
