// The package.json a release carries: this checkout's, without the `prepare` script (the package's
// `prepack` step writes it last, `postpack` puts the checkout's back). `prepare` builds dist/ when
// `npm install` runs in a checkout; npm never runs it for a tarball, yet lists it among the install
// scripts "not yet covered by allowScripts" at the end of an install, a notice that leaves an
// operator unsure the install finished. The checkout's file waits in package.json.packing: a pack
// that failed before `postpack` leaves it there, and the next pack starts from it.
//   node scripts/packManifest.js strip | restore
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'

const manifest = new URL('../package.json', import.meta.url)
const kept = new URL('../package.json.packing', import.meta.url)

const step = process.argv[2]
if (step === 'strip') {
  if (!existsSync(kept)) renameSync(manifest, kept)
  const pkg = JSON.parse(readFileSync(kept, 'utf8'))
  delete pkg.scripts.prepare
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`)
} else if (step === 'restore') {
  if (existsSync(kept)) renameSync(kept, manifest)
} else {
  process.stderr.write('usage: node scripts/packManifest.js strip|restore\n')
  process.exit(2)
}
