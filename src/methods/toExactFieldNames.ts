import { toGethFieldName } from './gethFieldName.ts'

/** Field names by the name geth matches them under (toGethFieldName's), for toExactFieldNames. */
export type FieldNames = ReadonlyMap<string, string>

/**
 * `object` with each field of `names` under its exact name, holding the value geth reads for it: the
 * last of the keys that fold to it (`{"fromBlock": "0x1", "FromBlock": "0x5"}` becomes
 * `{"fromBlock": "0x5"}`), so that tollgate's own reading and every node's is geth's. The same object
 * when every such key is written exactly already, as clients write them.
 */
export function toExactFieldNames(
  object: Record<string, unknown>,
  names: FieldNames,
): Record<string, unknown> {
  let written = true
  for (const key in object) {
    const name = names.get(toGethFieldName(key))
    if (name !== undefined && name !== key) written = false
  }
  if (written) return object
  const others: [string, unknown][] = []
  const read = new Map<string, unknown>()
  for (const key in object) {
    const name = names.get(toGethFieldName(key))
    if (name === undefined) others.push([key, object[key]])
    else read.set(name, object[key])
  }
  // fromEntries defines each key, `__proto__` included, as a plain field
  return Object.fromEntries([...others, ...read])
}
