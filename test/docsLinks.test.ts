import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, it } from 'node:test'

// Every relative link and #anchor in the README and the docs resolves: the file (or folder) exists,
// and an anchor names a heading of the file it points into, slugged as GitHub slugs it.

const root = new URL('..', import.meta.url).pathname

function markdownFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return markdownFiles(path)
    return entry.name.endsWith('.md') ? [path] : []
  })
}

/** The file's lines, those of fenced code blocks blank. */
function unfencedLines(text: string): string[] {
  let fence: string | undefined
  return text.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined
      return ''
    }
    return fence === undefined ? line : ''
  })
}

/** GitHub's heading slug: lower case, punctuation dropped, each space a hyphen; repeats get -1, -2, ... */
function toSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
}

const anchorCache = new Map<string, Set<string>>()

function anchorsOf(file: string): Set<string> {
  const cached = anchorCache.get(file)
  if (cached) return cached
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of unfencedLines(readFileSync(join(root, file), 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading !== undefined) {
      const slug = toSlug(heading)
      const count = seen.get(slug) ?? 0
      seen.set(slug, count + 1)
      anchors.add(count === 0 ? slug : `${slug}-${count}`)
    }
    for (const [, id] of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) if (id) anchors.add(id)
  }
  anchorCache.set(file, anchors)
  return anchors
}

type Link = { line: number; target: string }

function linksOf(file: string): Link[] {
  return unfencedLines(readFileSync(join(root, file), 'utf8')).flatMap((line, index) =>
    // inline code spans blanked: a link written as code is not a link
    [
      ...line
        .replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length))
        .matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g),
    ].map((match) => ({
      line: index + 1,
      target: match[1] ?? '',
    })),
  )
}

/** Why a link does not resolve, or undefined when it does. */
function brokenBecause(file: string, target: string): string | undefined {
  if (/^[a-z][a-z+.-]*:/i.test(target)) return undefined
  const [path = '', anchor] = target.split('#')
  const resolved = path === '' ? file : relative(root, join(root, dirname(file), decodeURIComponent(path)))
  if (resolved.startsWith('..')) return 'points outside the repository'
  if (!existsSync(join(root, resolved))) return `${resolved} does not exist`
  if (anchor === undefined || anchor === '') return undefined
  if (!resolved.endsWith('.md') || statSync(join(root, resolved)).isDirectory()) return undefined
  if (!anchorsOf(resolved).has(decodeURIComponent(anchor).toLowerCase()))
    return `${resolved} has no heading #${anchor}`
  return undefined
}

describe('links in the README and docs/', () => {
  const files = ['README.md', ...markdownFiles('docs'), ...markdownFiles('bench')]

  it('slugs headings as GitHub does', () => {
    assert.equal(toSlug('5a. Browsers, compression, retry hints'), '5a-browsers-compression-retry-hints')
    assert.equal(toSlug('Credits across instances (Redis)'), 'credits-across-instances-redis')
    assert.equal(toSlug('Workers: one port, many processes'), 'workers-one-port-many-processes')
    assert.equal(toSlug("`tollgate start` and the devnet's node"), 'tollgate-start-and-the-devnets-node')
    assert.equal(toSlug('[Admin API](x.md) & dashboard'), 'admin-api--dashboard')
  })

  it('finds links outside code only', () => {
    assert.ok(files.length >= 10, files.join(', '))
    assert.ok(linksOf('README.md').length >= 10, 'the README links the docs')
  })

  for (const file of files) {
    it(`${file}: every relative link and anchor resolves`, () => {
      const broken = linksOf(file).flatMap(({ line, target }) => {
        const why = brokenBecause(file, target)
        return why ? [`${file}:${line} (${target}): ${why}`] : []
      })
      assert.deepEqual(broken, [])
    })
  }
})
