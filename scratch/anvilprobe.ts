import { startAnvil } from '/work/main/src/devnet/startAnvil.ts'
const a = await startAnvil()
const rpc = async (method: string, params: unknown[] = []) => (await (await fetch(a.url, {method:'POST', headers:{'content-type':'application/json'}, body: JSON.stringify({jsonrpc:'2.0', id:1, method, params})})).json())
await rpc('anvil_mine', ['0x64'])
for (const t of ['latest','safe','finalized']) { const r = await rpc('eth_getBlockByNumber',[t,false]); console.log(t, r.result?.number, r.error) }
const before = await rpc('eth_getBlockByNumber',['latest',false])
console.log('reorg', JSON.stringify(await rpc('anvil_reorg', [3, []])))
const after = await rpc('eth_getBlockByNumber',['latest',false])
console.log(before.result.number, before.result.hash, after.result.number, after.result.hash)
console.log(JSON.stringify(await rpc('eth_getBlockByNumber',['0x1',false])).slice(0,300))
console.log(JSON.stringify(await rpc('web3_clientVersion')))
await a.stop()
