// The licences of the packages a build bundles (scripts/buildServer.js, scripts/buildDashboard.js): a
// bundle carries their code, and a release installs none of them beside it, so it carries their
// licences too. Each package's name, version and licence as it ships them: its licence files, else
// its README's licence section, and its NOTICE files (Apache-2.0 asks for those); a bundled package
// with no licence text found stops the build.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../', import.meta.url))

/**
 * Writes `file` (a URL) for the packages whose code is in the outputs of `metafile` (an esbuild
 * metafile, its paths relative to the repository's root, the build's absWorkingDir: a package it
 * read and left no byte of is not bundled). `title` says what bundles them.
 */
export function writeLicences(metafile, file, title) {
  const packageDirs = new Set()
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const at = input.lastIndexOf('node_modules/')
      if (at === -1 || bytesInOutput === 0) continue
      const parts = input.slice(at + 'node_modules/'.length).split('/')
      const name = parts.slice(0, parts[0].startsWith('@') ? 2 : 1)
      packageDirs.add(`${input.slice(0, at)}node_modules/${name.join('/')}`)
    }
  }
  const notices = [...packageDirs].map(noticeOf).sort((a, b) => a.heading.localeCompare(b.heading))
  const lines = [`# Third-party licences: ${title}`, '']
  lines.push('The packages bundled into it, each with its licence as the package ships it.')
  for (const { heading, texts } of notices) {
    lines.push('', heading)
    for (const text of texts) {
      // a fence longer than any run of backticks in the text, which it cannot then end
      const fence = '`'.repeat(Math.max(3, ...(text.match(/`+/g) ?? []).map((run) => run.length + 1)))
      lines.push('', fence, text, fence)
    }
  }
  writeFileSync(file, `${lines.join('\n')}\n`)
}

/** A package's heading (`## name version (licence)`) and the texts of its licence and notices. */
function noticeOf(dir) {
  const read = (file) => readFileSync(join(root, dir, file), 'utf8')
  const { name, version, license, licenses } = JSON.parse(read('package.json'))
  const licence = [license ?? licenses ?? []]
    .flat()
    .map((each) => (typeof each === 'string' ? each : each?.type))
    .join(' OR ')
  const files = readdirSync(join(root, dir))
    .filter((each) => statSync(join(root, dir, each)).isFile())
    .sort()
  const texts = files.filter((each) => /^(licen[cs]e|copying)/i.test(each)).map((each) => read(each).trim())
  const readme = files.find((each) => /^readme/i.test(each))
  if (texts.length === 0 && readme !== undefined) texts.push(licenceSection(read(readme)))
  if (!texts.some((text) => text.length > 0))
    throw new Error(`${dir} is bundled, but the build finds no licence text in it to carry`)
  for (const each of files.filter((file) => /^notice/i.test(file))) texts.push(read(each).trim())
  return { heading: `## ${name} ${version} (${licence || 'see below'})`, texts }
}

/** A README's licence section: from its heading to the next heading of its level or above ('' if none). */
function licenceSection(readme) {
  const heading = /^(#+) *licen[cs]es?\b.*$/im.exec(readme)
  if (heading === null) return ''
  const rest = readme.slice(heading.index + heading[0].length)
  const next = new RegExp(`^#{1,${heading[1].length}} `, 'm').exec(rest)
  return (next === null ? rest : rest.slice(0, next.index)).trim()
}
