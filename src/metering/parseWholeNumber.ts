import { AdminRequestError } from '../errors/adminErrors.ts'

/**
 * A whole number from a query string or a CLI option (`name` says which): decimal digits only, from
 * `min` to `max`; absent (null or undefined) gives `fallback`. Anything else is an AdminRequestError
 * (400) naming the bounds.
 */
export function parseWholeNumber(
  name: string,
  text: string | null | undefined,
  bounds: { min: number; max: number; fallback: number },
): number {
  if (text === null || text === undefined) return bounds.fallback
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN
  if (!(value >= bounds.min && value <= bounds.max)) {
    throw new AdminRequestError(`${name}: expected a whole number from ${bounds.min} to ${bounds.max}`)
  }
  return value
}
