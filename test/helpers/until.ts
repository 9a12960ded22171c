/**
 * Waits until `check()` holds (it may be async: each look is awaited before the next), looking every
 * 20 ms; throws naming `what` after `timeoutMs`.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what = 'the condition',
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
