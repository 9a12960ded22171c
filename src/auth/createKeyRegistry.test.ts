import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { storeBackends } from '../../test/helpers/storeBackends.ts'
import { until } from '../../test/helpers/until.ts'
import { loadConfig } from '../config/loadConfig.ts'
import { createKeyRegistry, type KeyChange } from './createKeyRegistry.ts'
import { createKeyAdmin } from './keyAdmin.ts'

for (const backend of storeBackends)
  describe(`createKeyRegistry on ${backend.name}`, async () => {
    const database = await backend.createDatabase()
    const store = (await database.open()).keys
    const { plans } = loadConfig(undefined)
    const admin = createKeyAdmin(store, plans)
    // a timer that never fires within a test: every reload here is an explicit refresh
    const registry = await createKeyRegistry(store, plans, { refreshMs: 3_600_000 })
    const changes: KeyChange[] = []
    registry.onChange((change) => changes.push(change))
    after(() => {
      registry.close()
      return database.remove()
    })

    it('keeps the entry of an unchanged key, and announces changed and removed keys', async () => {
      const { key: first } = await admin.create({ plan: 'developer', name: 'first' })
      const { key: second } = await admin.create({ plan: 'developer', name: 'second' })
      const { key: third } = await admin.create({ plan: 'developer', name: 'third' })
      await registry.refresh()
      assert.deepEqual(changes, [], 'created keys are no change to anyone holding a key')
      const before = [first, second, third].map((key) => registry.findActiveKey(key.key))
      assert.ok(before.every((entry) => entry !== undefined))

      await admin.addAllowlistEntries(second.key, 'methods', ['eth_chainId'])
      await admin.revoke(third.key)
      await registry.refresh()

      assert.equal(registry.findActiveKey(first.key), before[0], 'unchanged: the same object')
      const changedEntry = registry.findActiveKey(second.key)
      assert.notEqual(changedEntry, before[1])
      assert.deepEqual([...(changedEntry?.access.methods ?? [])], ['eth_chainId'])
      assert.equal(registry.findActiveKey(third.key), undefined)
      assert.deepEqual(
        changes.map(({ changed, removed }) => ({ changed: [...changed], removed: [...removed] })),
        [{ changed: [second.key], removed: [third.key] }],
      )
    })

    it('new plans: the keys of a plan whose numbers changed get new entries and are announced; others keep theirs', async () => {
      const { key: core } = await admin.create({ plan: 'core', name: 'on core' })
      const { key: team } = await admin.create({ plan: 'team', name: 'on team' })
      await registry.refresh()
      changes.length = 0
      const teamBefore = registry.findActiveKey(team.key)
      await registry.setPlans({ ...plans, core: { ...plans.core, dailyCredits: 1_234 } })
      assert.equal(registry.findActiveKey(core.key)?.subject.accountDailyCredits, 1_234)
      assert.equal(registry.findActiveKey(team.key), teamBefore, 'same numbers: the same entry')
      assert.ok(changes.some(({ changed }) => changed.has(core.key)))
      assert.ok(changes.every(({ changed }) => !changed.has(team.key)))
      await registry.setPlans(plans)
      assert.equal(registry.findActiveKey(core.key)?.subject.accountDailyCredits, plans.core.dailyCredits)
    })

    it('refreshes asked for at once run one after another, and nothing changed is no announcement', async () => {
      const { key } = await admin.create({ plan: 'developer', name: 'limits' })
      await registry.refresh()
      changes.length = 0
      await admin.setLimits(key.key, { creditsPerSecond: 7 })
      await Promise.all([registry.refresh(), registry.refresh(), registry.refresh()])
      assert.equal(changes.length, 1)
      assert.equal(registry.findActiveKey(key.key)?.subject.keyCreditsPerSecond, 7)
      await registry.refresh()
      assert.equal(changes.length, 1)
    })

    it('a watch cue starts a reload at once; cues during one are one more reload, not one each', async () => {
      let cue: (() => void) | undefined
      let versionChecks = 0
      const counted = {
        ...store,
        getKeysVersion() {
          versionChecks++
          return store.getKeysVersion()
        },
      }
      const watched = await createKeyRegistry(counted, plans, {
        refreshMs: 3_600_000,
        watch(listener) {
          cue = listener
          return () => {
            cue = undefined
          }
        },
      })
      try {
        const { key } = await admin.create({ plan: 'developer', name: 'cued' })
        assert.equal(watched.findActiveKey(key.key), undefined)
        const before = versionChecks
        for (let i = 0; i < 5; i++) cue?.()
        await until(() => watched.findActiveKey(key.key) !== undefined, 'the key after the cue')
        await watched.refresh()
        // the five cues: the first reload, then at most one queued behind it; then the refresh
        assert.ok(versionChecks - before <= 3, `${versionChecks - before} version checks`)
      } finally {
        watched.close()
      }
      assert.equal(cue, undefined, 'close() stops watching')
    })

    it('with no watch, a revoked key is refused after at most one refresh interval (1 s by default)', async (t) => {
      t.mock.timers.enable({ apis: ['setInterval'] })
      let versionChecks = 0
      const counted = {
        ...store,
        getKeysVersion() {
          versionChecks++
          return store.getKeysVersion()
        },
      }
      const polled = await createKeyRegistry(counted, plans)
      try {
        const { key } = await admin.create({ plan: 'developer', name: 'polled' })
        await polled.refresh()
        assert.ok(polled.findActiveKey(key.key))
        await admin.revoke(key.key)
        const removed = new Promise<KeyChange>((resolve) => polled.onChange(resolve))
        const before = versionChecks
        t.mock.timers.tick(999)
        await new Promise(setImmediate)
        assert.equal(versionChecks, before, 'no reload before the second is up')
        t.mock.timers.tick(1)
        assert.deepEqual([...(await removed).removed], [key.key])
        assert.equal(polled.findActiveKey(key.key), undefined)
      } finally {
        polled.close()
      }
    })

    it('new plans set while a reload is making an entry: the key ends on the new plan numbers', async () => {
      const { key: core } = await admin.create({ plan: 'core', name: 'during a reload' })
      const newPlans = { ...plans, core: { ...plans.core, dailyCredits: 4_321 } }
      let planned: Promise<void> | undefined
      let armed = false
      // the row of `core` as listed: its settings are read once for its fingerprint, then once to
      // make its entry (after its plan's numbers): new plans are set right there
      const listed = async () =>
        (await store.listKeys()).map((row) => {
          if (row.key !== core.key) return row
          let reads = 0
          const { settings, ...rest } = row
          return Object.defineProperty({ ...rest }, 'settings', {
            enumerable: true,
            get() {
              reads += 1
              if (armed && reads === 2) planned ??= local.setPlans(newPlans)
              return settings
            },
          }) as typeof row
        })
      const local = await createKeyRegistry({ ...store, listKeys: listed }, plans, { refreshMs: 3_600_000 })
      try {
        // the key changes: the next reload makes its entry again
        await admin.addAllowlistEntries(core.key, 'methods', ['eth_chainId'])
        armed = true
        await local.refresh()
        assert.ok(planned, 'the plans changed while the entry was made')
        await planned
        assert.equal(local.findActiveKey(core.key)?.subject.accountDailyCredits, 4_321)
      } finally {
        local.close()
      }
    })

    it('a listener that throws is reported and does not stop the others', async () => {
      const errors: unknown[] = []
      const local = await createKeyRegistry(store, plans, {
        refreshMs: 3_600_000,
        onError: (err) => errors.push(err),
      })
      const heard: KeyChange[] = []
      local.onChange(() => {
        throw new Error('listener failed')
      })
      const stop = local.onChange((change) => heard.push(change))
      try {
        const { key: revoked } = await admin.create({ plan: 'developer', name: 'listeners' })
        const { key: kept } = await admin.create({ plan: 'developer', name: 'after' })
        await local.refresh()
        await admin.revoke(revoked.key)
        await local.refresh()
        assert.equal(heard.length, 1)
        assert.equal(errors.length, 1)
        stop()
        await admin.setLimits(kept.key, { dailyCredits: 1 })
        await local.refresh()
        assert.equal(local.findActiveKey(kept.key)?.subject.keyDailyCredits, 1)
        assert.equal(heard.length, 1, 'a stopped listener hears nothing more')
        assert.equal(errors.length, 2, 'the throwing one still runs')
      } finally {
        local.close()
      }
    })
  })
