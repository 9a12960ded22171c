/** Waits until `check()` holds, looking every 20 ms; throws naming `what` after `timeoutMs`. */
export async function until(check: () => boolean, what = 'the condition', timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
