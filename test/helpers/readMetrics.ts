/** One sample of a Prometheus text: `name{label="value",...} value`. */
export type Sample = { name: string; labels: Record<string, string>; value: number }

/** The samples of a /metrics text, and what the tests read of them. */
export type Metrics = {
  samples: Sample[]
  /** The samples named `name` whose labels include `labels` (each label with that value). */
  all(name: string, labels?: Record<string, string>): Sample[]
  /** The value of the one sample `all` finds; undefined when none; throws when several (a test naming too few labels). */
  value(name: string, labels?: Record<string, string>): number | undefined
  /** The sum of the values of the samples `all` finds (0 when none). */
  sum(name: string, labels?: Record<string, string>): number
}

/**
 * A gateway's /metrics (`base` is its URL, `init` goes to fetch), parsed. Throws on an answer other
 * than 200: a scrape refused is not a scrape without the series.
 */
export async function readMetrics(base: string, init?: RequestInit): Promise<Metrics> {
  const response = await fetch(`${base}/metrics`, init)
  const text = await response.text()
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}: ${text.slice(0, 200)}`)
  return parseMetrics(text)
}

/**
 * The samples of a Prometheus text (HELP, TYPE and other `#` lines skipped; label values unescaped:
 * they may hold `\"`, `\\`, `\n`, commas and braces). Throws on a line that is no sample: the tests
 * of the format itself are test/metrics.e2e.test.ts's, this one reads values.
 */
export function parseMetrics(text: string): Metrics {
  const samples = text
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map(parseSample)
  const all = (name: string, labels: Record<string, string> = {}) =>
    samples.filter(
      (sample) =>
        sample.name === name &&
        Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
    )
  return {
    samples,
    all,
    value(name, labels) {
      const found = all(name, labels)
      if (found.length > 1)
        throw new Error(`${found.length} samples of ${name} have ${JSON.stringify(labels)}`)
      return found[0]?.value
    },
    sum: (name, labels) => all(name, labels).reduce((sum, sample) => sum + sample.value, 0),
  }
}

const namePattern = /[a-zA-Z_:][a-zA-Z0-9_:]*/y
/** A label and its quoted value, then a comma or the closing brace. */
const labelPattern = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|(?=\}))/y
/** The value, then an optional timestamp. */
const valuePattern = /[ \t]+(\S+)(?:[ \t]+-?\d+)?[ \t]*$/y

function parseSample(line: string): Sample {
  let at = 0
  const take = (pattern: RegExp) => {
    pattern.lastIndex = at
    const match = pattern.exec(line)
    if (!match) throw new Error(`not a Prometheus sample (at ${at}): ${line}`)
    at = pattern.lastIndex
    return match
  }
  const name = take(namePattern)[0]
  const labels: Record<string, string> = {}
  if (line[at] === '{') {
    at++
    while (line[at] !== '}') {
      const [, label = '', quoted = ''] = take(labelPattern)
      labels[label] = quoted.replace(/\\(.)/g, (_, escaped: string) => (escaped === 'n' ? '\n' : escaped))
    }
    at++
  }
  const [, value = ''] = take(valuePattern)
  return { name, labels, value: toNumber(value, line) }
}

/** A sample's value as Prometheus reads it: a float, `+Inf`, `-Inf` or `NaN` (prom-client writes `Nan`). */
function toNumber(text: string, line: string): number {
  if (/^[+-]?Inf$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity
  if (/^NaN$/i.test(text)) return Number.NaN
  const value = Number(text)
  if (Number.isNaN(value)) throw new Error(`not a sample value: ${line}`)
  return value
}
