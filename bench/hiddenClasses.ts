// npm run bench:hidden-classes: does every method spec, and every param spec, have one shape (V8 map)?
// The request path reads them on every call: a spec spread from rows of differing fields or field
// types would get a map of its own, and the code reading specs would turn polymorphic. V8's own
// %HaveSameMap answers, so node runs with --allow-natives-syntax (the npm script passes it). Prints
// the counts and any spec whose map differs from the first; exits 1 if one does.
import { getMethodSpec, getOfferedMethods } from '../src/methods/methodTable.ts'

/** V8's %HaveSameMap, compiled at run time: TypeScript cannot spell natives syntax. */
function toHaveSameMap(): (a: object, b: object) => boolean {
  try {
    return new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean
  } catch {
    throw new Error('run with node --allow-natives-syntax (npm run bench:hidden-classes)')
  }
}

const haveSameMap = toHaveSameMap()
const specs = [...getOfferedMethods(), 'eth_somethingNew'].map(getMethodSpec)
const params = specs.flatMap((spec) => spec.params)
const [firstSpec, firstParam] = [specs[0], params[0]]
if (!firstSpec || !firstParam) throw new Error('the method table is empty')
const differing = [
  ...specs.filter((spec) => !haveSameMap(spec, firstSpec)).map((spec) => spec.name),
  ...params.filter((param) => !haveSameMap(param, firstParam)).map(() => 'a param spec'),
]
process.stdout.write(
  `${specs.length} method specs, ${params.length} param specs: ` +
    `${differing.length === 0 ? 'one map each' : `differing maps: ${differing.join(', ')}`}\n`,
)
if (differing.length > 0) process.exitCode = 1
