import { type AllowlistKind, allowlistKinds } from './allowlistKind.ts'

/**
 * The name of each allowlist kind where one is typed: the CLI's KIND argument and the admin API's
 * `/allowlists/{kind}` segment. The kind's field name in settings and JSON (`userAgents`) is
 * accepted too, in both places.
 */
export const allowlistKindNames = {
  contracts: 'contracts',
  userAgents: 'user-agents',
  origins: 'origins',
  methods: 'methods',
} as const satisfies Record<AllowlistKind, string>

/** The names above in order, for help texts and messages: `contracts, user-agents, origins, methods`. */
export const allowlistKindList = allowlistKinds.map((kind) => allowlistKindNames[kind]).join(', ')

/** The kind a typed name means (its name above, or its field name), or undefined for any other word. */
export function toAllowlistKind(name: string): AllowlistKind | undefined {
  return allowlistKinds.find((kind) => kind === name || allowlistKindNames[kind] === name)
}
