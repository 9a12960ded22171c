import { KeyAdminError } from '../errors/adminErrors.ts'

/** The most characters (code points) a key's or an account's name may have. */
const maxNameCharacters = 100

/** Bidirectional formatting characters: they make a name display as something it is not. */
const bidiControl = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u
/** Control characters (C0, DEL, C1) and the line and paragraph separators. */
const otherControl = /[\p{Cc}\u2028\u2029]/u

/**
 * A key's or an account's name (`what` says which) as the CLI, the admin API and the dashboard take
 * it: at most 100 characters, none of them a control or bidirectional formatting character (a
 * right-to-left override would make `gpj.exe` show as `exe.jpg`). Throws a KeyAdminError (400) that
 * names the character and where it is.
 */
export function parseName(what: string, name: string): string {
  const characters = [...name]
  if (characters.length > maxNameCharacters) {
    throw new KeyAdminError(
      `${what} is too long: at most ${maxNameCharacters} characters, got ${characters.length}`,
    )
  }
  const at = characters.findIndex((character) => bidiControl.test(character) || otherControl.test(character))
  if (at >= 0) {
    const character = characters[at] as string
    const code = `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`
    const kind = bidiControl.test(character) ? 'a bidirectional formatting character' : 'a control character'
    throw new KeyAdminError(`${what} may not contain ${code} (${kind}), found at character ${at + 1}`)
  }
  return name
}
