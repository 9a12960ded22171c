import type { Logger } from 'pino'

/** Something started that must be stopped. */
export type Closable = { close(): Promise<void> | void }

/** What a composition's build starts its stages with. */
export type Stages = {
  /**
   * Starts one stage: `start` builds it and hands back what it built with its own close, kept to
   * run before the closes of the stages started earlier. A stage that throws closes what it started
   * itself before it does (one made of parts composes them: composeStages).
   */
  start<S extends Closable>(start: () => S | Promise<S>): Promise<S>
}

/**
 * Builds something out of stages started one after the other (`build` starts each with
 * `stages.start`, handing on what the earlier ones built) and gives it one close: every stage's
 * close, latest first, each once the one after it has ended. A close that throws does not stop the
 * ones before it: the first error is thrown once all have run, the others logged; a second close
 * waits for the first. When `build` throws, the stages it started are closed the same way, and its
 * error is thrown on (a close's error then only logged). The app is composed so (createApp), and
 * so are the stages made of parts.
 */
export async function composeStages<T extends object>(
  log: Pick<Logger, 'warn'>,
  build: (stages: Stages) => Promise<T>,
): Promise<T & { close(): Promise<void> }> {
  const started: Closable[] = []
  let closing: Promise<void> | undefined
  const warn = (err: unknown) => log.warn({ err }, 'stopping a part of the gateway failed')

  async function closeAll(): Promise<void> {
    const errors: unknown[] = []
    for (const stage of started.splice(0).reverse()) {
      try {
        await stage.close()
      } catch (err) {
        errors.push(err)
      }
    }
    for (const err of errors.slice(1)) warn(err)
    if (errors.length > 0) throw errors[0]
  }
  const close = (): Promise<void> => {
    closing ??= closeAll()
    return closing
  }

  const stages: Stages = {
    async start(start) {
      const stage = await start()
      started.push(stage)
      return stage
    },
  }
  try {
    return { ...(await build(stages)), close }
  } catch (err) {
    await close().catch(warn)
    throw err
  }
}
