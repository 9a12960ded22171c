import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createSharedEpochs } from './createSharedEpochs.ts'

const genesis = `0x${'ab'.repeat(32)}`

/** A promise and its resolver, for a Redis answer a test gives when it wants. */
function deferred<T>() {
  let resolve: (value: T) => void = () => {}
  const promise = new Promise<T>((done) => {
    resolve = done
  })
  return { promise, resolve }
}

/** Epochs over a fake Redis whose readings and moves are answered by the test, in any order. */
function fakeRedis() {
  const reads: ReturnType<typeof deferred<string | undefined>>[] = []
  const moves: ReturnType<typeof deferred<string | undefined>>[] = []
  const epochs = createSharedEpochs({
    keyPrefix: 'p:',
    read: () => {
      const answer = deferred<string | undefined>()
      reads.push(answer)
      return answer.promise
    },
    move: () => {
      const answer = deferred<string | undefined>()
      moves.push(answer)
      return answer.promise
    },
  })
  return { epochs, reads, moves }
}

describe('createSharedEpochs', () => {
  it('nothing is read or kept until the epoch is read; a forget moves at once and settles on the newest epoch', async () => {
    const { epochs, reads, moves } = fakeRedis()
    let heard = 0
    const epoch = epochs.join(1, genesis, () => heard++)
    assert.equal(epoch.keyBase, undefined)
    reads[0]?.resolve('0')
    await epoch.ready
    assert.equal(epoch.keyBase, `p:cache:1:${genesis}:0:`)
    assert.equal(heard, 0, 'a first reading is news to no one')

    const forgetting = epochs.forget(epoch)
    assert.deepEqual([epoch.keyBase, heard], [undefined, 1], 'at once, before Redis answers')
    // its own announcement, then a later instance's, come before the move's answer
    epochs.heard(1, genesis, '1000')
    epochs.heard(1, genesis, '2000')
    assert.equal(epoch.keyBase, undefined)
    moves[0]?.resolve('1000')
    await forgetting
    assert.equal(epoch.keyBase, `p:cache:1:${genesis}:2000:`, 'the newest, not its own older one')
    assert.equal(heard, 1)
    // another instance's forget: announced
    epochs.heard(1, genesis, '3000')
    assert.deepEqual([epoch.keyBase, heard], [`p:cache:1:${genesis}:3000:`, 2])
    // another chain's, or garbage: nothing
    epochs.heard(2, genesis, '4000')
    epochs.heard(1, genesis, 'x')
    assert.deepEqual([epoch.keyBase, heard], [`p:cache:1:${genesis}:3000:`, 2])
  })

  it('a forget Redis does not take is made on refresh; a reading sent before an announcement does not undo it', async () => {
    const { epochs, reads, moves } = fakeRedis()
    let heard = 0
    const epoch = epochs.join(1, genesis, () => heard++)
    reads[0]?.resolve('5')
    await epoch.ready
    const forgetting = epochs.forget(epoch)
    moves[0]?.resolve(undefined)
    await forgetting
    assert.equal(epoch.keyBase, undefined, 'misses until Redis takes it')
    epochs.refresh()
    assert.equal(reads.length, 1, 'not read: the forget is made first')
    moves[1]?.resolve('9000')
    await Promise.resolve()
    await Promise.resolve()
    assert.equal(epoch.keyBase, `p:cache:1:${genesis}:9000:`)

    // a reading sent, then an announcement, then the reading's (older) answer
    epochs.refresh()
    epochs.heard(1, genesis, '9500')
    reads[1]?.resolve('9000')
    await Promise.resolve()
    await Promise.resolve()
    assert.equal(epoch.keyBase, `p:cache:1:${genesis}:9500:`)
    // a reading that finds another epoch (an announcement missed) tells the listeners
    const before = heard
    epochs.refresh()
    reads[2]?.resolve('9900')
    await Promise.resolve()
    await Promise.resolve()
    assert.deepEqual([epoch.keyBase, heard], [`p:cache:1:${genesis}:9900:`, before + 1])
  })
  it("a chain's record goes with its last store: a chain restarted again and again leaves none behind", async () => {
    const { epochs, reads } = fakeRedis()
    const listeners = [() => {}, () => {}]
    const first = epochs.join(1, genesis, listeners[0] as () => void)
    const again = epochs.join(1, genesis, listeners[1] as () => void)
    assert.equal(again, first, 'two stores of one chain share its record')
    reads[0]?.resolve('5')
    await first.ready
    // restarts: each store leaves the genesis before for the new one
    for (let restart = 0; restart < 3; restart++) {
      const next = `0x${String(restart).repeat(64)}`
      const before = restart === 0 ? genesis : `0x${String(restart - 1).repeat(64)}`
      for (const listener of listeners) {
        epochs.leave({ chainId: 1, genesis: before } as Parameters<typeof epochs.leave>[0], listener)
        epochs.join(1, next, listener)
      }
    }
    assert.equal(reads.length, 4, 'one reading per genesis')
    // the first genesis again: a record anew, read anew (the old one was dropped, not kept)
    for (const listener of listeners) {
      epochs.leave(
        { chainId: 1, genesis: `0x${'2'.repeat(64)}` } as Parameters<typeof epochs.leave>[0],
        listener,
      )
    }
    const back = epochs.join(1, genesis, listeners[0] as () => void)
    assert.notEqual(back, first)
    assert.equal(back.keyBase, undefined)
    assert.equal(reads.length, 5)
    // while one store still reads a chain, its record stays
    epochs.join(1, genesis, listeners[1] as () => void)
    epochs.leave(back, listeners[0] as () => void)
    assert.equal(epochs.join(1, genesis, listeners[0] as () => void), back)
    assert.equal(reads.length, 5)
  })
})
