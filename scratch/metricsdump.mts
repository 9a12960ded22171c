import { startTestGateway } from '../test/helpers/startTestGateway.ts'
import { startTestNode } from '../test/helpers/startTestNode.ts'
const node = await startTestNode({ loadBlocks: 1 })
const g = await startTestGateway({ upstreams: [node.url] })
await fetch(g.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' })
const text = await (await fetch(`${g.url}/metrics`)).text()
console.log(text.split('\n').filter((l) => l.includes('tollgate_')).join('\n'))
console.log(text.split('\n').length, 'lines')
await g.close(); await node.stop()
