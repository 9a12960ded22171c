import type { PlanName } from './configSchema.ts'

/** The plans in order, cheapest first. A module of its own so the CLI's help need not load the config schema. */
export const planNames = [
  'core',
  'developer',
  'team',
  'growth',
  'custom',
] as const satisfies readonly PlanName[]
