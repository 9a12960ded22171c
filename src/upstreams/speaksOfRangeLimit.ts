/**
 * Words of a range of blocks: `range`, `ranges`, `N blocks`, `too many blocks`. Not `out of range`
 * (proxyd's `block is out of range`, a block above its head) nor `block` alone (`exceeds block gas
 * limit`, `max fee per gas less than block base fee`).
 */
const rangeWords = /(?<!out of )\branges?\b|\bblocks\b/i

/** Words of an answer's size: its results, its logs, the response. */
const resultWords = /\bresults\b|\blogs\b|\bresponse\b/i

/**
 * Words of a limit passed: `limit`, `exceed`, `max`, `too many` / `too large` / `too wide`, `greater
 * than N`, `at most`, `up to a N`, `over N`. A comparison needs its number: `fromBlock greater than
 * toBlock` is a range written backwards, which no split mends.
 */
const limitWords =
  /\blimit|\bexceed|\bmax(imum)?\b|\btoo (many|large|wide|big|high|long)\b|\b(greater|larger|bigger|wider|more|longer) than \d|\bat most\b|\bup to (an? )?\d|\bover \d/i

/** Words of the caller's own allowance (a rate, a quota, credits): a refusal for now, not of the range. */
const allowanceWords = /\brate\b|\bquota\b|\bcapacity\b|\bcredits?\b|\bcompute units\b|\bper second\b/i

/**
 * Whether a node's error message refuses a range call by its meaning: it speaks of a block range or
 * of the answer's size, and of a limit passed (proxyd's `block range greater than 1000 max`, any
 * provider's `block range limit exceeded`, `too many results`), and not of the caller's rate or
 * quota. The vendors' own wordings are named in nodeErrors.ts; this reads the ones nobody listed.
 */
export function speaksOfRangeLimit(message: string): boolean {
  if (!limitWords.test(message) || allowanceWords.test(message)) return false
  return rangeWords.test(message) || resultWords.test(message)
}
