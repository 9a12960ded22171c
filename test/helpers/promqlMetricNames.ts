/** Words of PromQL that stand where a metric name could, and are none. */
const keywords = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'atan2',
  'inf',
  'nan',
])

/**
 * The metric names a PromQL expression (or a Grafana `label_values(...)` query) reads: identifiers
 * standing alone or before `{` or `[`, once strings, label matchers, ranges, label lists (`by (...)`,
 * `on (...)`, ...), Grafana variables and numbers are taken out, and that are neither functions
 * (followed by `(`) nor keywords. Enough PromQL for dashboards and alert rules, not a parser.
 */
export function promqlMetricNames(expr: string): string[] {
  const labelValues = /^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$/s.exec(expr)
  const text = (labelValues ? (labelValues[1] as string) : expr)
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '[]')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ')
  const names = new Set<string>()
  for (const match of text.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const name = match[0]
    const before = text[match.index - 1] ?? ' '
    // the exponent of a number (1e3) or a duration's unit (5m after offset)
    if (/[0-9.]/.test(before)) continue
    if (
      text
        .slice(match.index + name.length)
        .trimStart()
        .startsWith('(')
    )
      continue
    if (keywords.has(name.toLowerCase())) continue
    names.add(name)
  }
  return [...names]
}
