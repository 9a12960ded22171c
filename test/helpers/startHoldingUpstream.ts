import { type FakeUpstream, startFakeUpstream } from './startFakeUpstream.ts'

export type HoldingUpstream = FakeUpstream & {
  /** Calls held now. */
  holding(): number
  /** Lets every held call through to the node. */
  release(): void
}

/** An upstream in front of `target` that holds every `method` call until release(); the rest pass. */
export async function startHoldingUpstream(target: string, method: string): Promise<HoldingUpstream> {
  const held: (() => void)[] = []
  const upstream = await startFakeUpstream({
    kind: 'rewrite',
    target,
    respond: (request) =>
      request.method === method
        ? new Promise<undefined>((resolve) => held.push(() => resolve(undefined)))
        : undefined,
  })
  return Object.assign(upstream, {
    holding: () => held.length,
    release: () => {
      for (const each of held.splice(0)) each()
    },
  })
}
