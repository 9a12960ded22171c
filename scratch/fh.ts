import { startTestNode } from '../test/helpers/startTestNode.ts'
const node = await startTestNode({ loadBlocks: 20 })
const rpc = async (method: string, params: unknown[] = []) => (await (await fetch(node.url, {method:'POST', headers:{'content-type':'application/json'}, body: JSON.stringify({jsonrpc:'2.0', id:1, method, params})})).json()).result
await rpc('anvil_mine', ['0x50'])
const lb = '0x' + (node.fixtures.loadBlocks.to - 3n).toString(16)
console.log(lb, JSON.stringify(await rpc('eth_feeHistory', [4, lb, []])))
console.log(JSON.stringify(await rpc('eth_feeHistory', ['0x5', 'latest', [10,50,90]])).slice(0,300))
await rpc('anvil_mine', ['0x3'])
console.log(lb, JSON.stringify(await rpc('eth_feeHistory', [4, lb, []])))
await node.stop()
