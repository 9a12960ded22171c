/** How far back `?days=` (and `tollgate usage --days`) reads usage: ten years of days. */
export const usageDays = { min: 1, max: 3650, fallback: 7 }

/** How far back `?hours=` reads hourly usage: a year of hours. */
export const usageHours = { min: 1, max: 8760, fallback: 48 }
