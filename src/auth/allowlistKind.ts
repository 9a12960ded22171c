/** The four kinds, by their field names in settings and JSON. Here, not with the settings schema: the CLI's help reads them. */
export const allowlistKinds = ['contracts', 'userAgents', 'origins', 'methods'] as const

export type AllowlistKind = (typeof allowlistKinds)[number]
