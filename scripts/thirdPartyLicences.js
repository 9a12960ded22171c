// The licences of the packages a build bundles (scripts/buildServer.js, scripts/buildDashboard.js): a
// bundle carries their code, and a release installs none of them beside it, so it carries their
// licences too. Each package's name, version and licence as it ships them: its licence files, else
// its README's licence section, and its NOTICE files (Apache-2.0 asks for those); a bundled package
// with no licence text found stops the build.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'

const root = new URL('../', import.meta.url)

/**
 * Writes `file` (a URL) for the packages among `inputs`, the paths of an esbuild metafile's inputs
 * (relative to the repository's root, the build's absWorkingDir). `title` says what bundles them.
 */
export function writeLicences(inputs, file, title) {
  const packageDirs = new Set()
  for (const input of inputs) {
    const at = input.lastIndexOf('node_modules/')
    if (at === -1) continue
    const parts = input.slice(at + 'node_modules/'.length).split('/')
    const name = parts.slice(0, parts[0].startsWith('@') ? 2 : 1)
    packageDirs.add(`${input.slice(0, at)}node_modules/${name.join('/')}`)
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
  const { name, version, license, licenses } = JSON.parse(readText(dir, 'package.json'))
  const licence =
    typeof license === 'string' ? license : (licenses?.map((each) => each.type).join(' OR ') ?? 'see below')
  const files = readdirSync(new URL(`${dir}/`, root))
    .filter((each) => statSync(new URL(`${dir}/${each}`, root)).isFile())
    .sort()
  const licenceFiles = files.filter((each) => /^(licen[cs]e|copying)/i.test(each))
  const texts = licenceFiles.map((each) => readText(dir, each).trim())
  if (texts.length === 0) {
    const readme = files.find((each) => /^readme/i.test(each))
    const section =
      readme && /^#+ *licen[cs]e\b.*\n([\s\S]*?)(?=^#+ |(?![\s\S]))/im.exec(readText(dir, readme))
    if (section) texts.push(section[1].trim())
  }
  if (texts.length === 0)
    throw new Error(`${dir} is bundled, but the build finds no licence text in it to carry`)
  for (const each of files.filter((file) => /^notice/i.test(file))) texts.push(readText(dir, each).trim())
  return { heading: `## ${name} ${version} (${licence})`, texts }
}

function readText(dir, file) {
  return readFileSync(new URL(`${dir}/${file}`, root), 'utf8')
}
