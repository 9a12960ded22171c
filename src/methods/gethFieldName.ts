/** The letters outside ASCII that Go folds to an ASCII one, and that letter in lower case. */
const asciiFolds: Readonly<Record<string, string>> = {
  '\u017f': 's', // ſ, long s: in s's fold set
  '\u212a': 'k', // Kelvin sign: in k's fold set
  '\u0130': 'i', // İ: lowers to i, as Go 1.21's encoding/json folded (ToUpper(ToLower(r)))
  '\u0131': 'i', // ı: uppers to I, the same
}
const foldsToAscii = /[\u017f\u212a\u0130\u0131]/g

/**
 * A JSON field name as geth matches it to a field, in lower case. Go's encoding/json matches names
 * case-insensitively: `{"CODE": ...}` and `{"Code": ...}` set `code`, as do `ſ` for `s` and the Kelvin
 * sign for `k` (its Unicode simple folding; `İ` and `ı` for `i` too in the Go releases that folded with
 * ToUpper(ToLower(r)), read here the wider way). Exact for names of ASCII letters, which every field
 * geth reads has: `ß` stays `ß` (never `ss`, as `toUpperCase` would make it), so no name reads as a
 * field geth would not set.
 */
export function toGethFieldName(name: string): string {
  return name.replace(foldsToAscii, (letter) => asciiFolds[letter] as string).toLowerCase()
}
