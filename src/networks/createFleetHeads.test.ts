import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createTestPrefix, type TestPrefix } from '../../test/helpers/testRedis.ts'
import { until } from '../../test/helpers/until.ts'
import { createFleetHeads, type FleetHeads } from './createFleetHeads.ts'
import type { HeadReport } from './HeadReport.ts'

const hash = (number: number) => `0x${number.toString(16).padStart(64, '0')}`
const reportAt = (number: number): HeadReport => ({
  header: { number: `0x${number.toString(16)}`, hash: hash(number), parentHash: hash(number - 1) },
  goesBack: false,
  finalized: undefined,
  genesis: undefined,
  gasLimit: undefined,
  members: new Map([['anvil', BigInt(number)]]),
})

describe('createFleetHeads (a real Redis)', () => {
  let prefix: TestPrefix
  const made: FleetHeads[] = []
  // a poll far longer than the test: a takeover it sees comes from the holder's word, not a timer
  const open = async () => {
    const fleet = await createFleetHeads({ url: prefix.url, keyPrefix: prefix.keyPrefix, pollMs: 60_000 })
    made.push(fleet)
    return fleet
  }
  before(() => {
    prefix = createTestPrefix()
  })
  after(async () => {
    for (const fleet of made) await fleet.close()
    await prefix.remove()
  })

  it('one leads; its reports reach the others, a newcomer gets the latest at once; when it stops another leads at once', async () => {
    const first = (await open()).forNetwork(1, 'mainnet')
    await until(() => first.leads() && first.connected(), 'the first to lead')
    const second = (await open()).forNetwork(1, 'mainnet')
    const heard: number[] = []
    second.onReport((report) => heard.push(Number(report.header.number)))
    // another network of the same chain is another lease
    const other = (await open()).forNetwork(1, 'other')
    await until(() => other.leads(), 'the other network to have a holder of its own')
    assert.equal(second.leads(), false)

    first.report(reportAt(5))
    first.report(reportAt(6))
    await until(() => heard.length === 2, 'the reports')
    assert.deepEqual(heard, [5, 6])
    // a follower's report is not sent
    second.report(reportAt(99))

    const newcomer = (await open()).forNetwork(1, 'mainnet')
    const latest: HeadReport[] = []
    newcomer.onReport((report) => latest.push(report))
    await until(() => latest.length === 1, 'the latest report')
    assert.deepEqual(latest[0], reportAt(6))

    first.close()
    await until(() => second.leads() || newcomer.leads(), 'another instance to lead')
    assert.equal([second, newcomer].filter((each) => each.leads()).length, 1)
    assert.deepEqual(heard, [5, 6])
  })

  it('a report that does not parse is ignored', async () => {
    const fleet = (await open()).forNetwork(2, 'chain')
    const heard: HeadReport[] = []
    fleet.onReport((report) => heard.push(report))
    const channel = `${prefix.keyPrefix}head-reports:2:chain`
    await until(async () => {
      const [, count] = (await prefix.redis.pubsub('NUMSUB', channel)) as [string, number]
      return Number(count) > 0
    }, 'the subscription')
    await prefix.redis.publish(channel, '{"header":7}')
    await prefix.redis.publish(
      channel,
      JSON.stringify({ header: reportAt(3).header, goesBack: false, members: {} }),
    )
    await until(() => heard.length === 1, 'the good report')
    assert.equal(heard[0]?.header.number, '0x3')
  })
})
