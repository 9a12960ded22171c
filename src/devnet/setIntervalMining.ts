/** Makes anvil mine a block every `seconds` from now on (seeding, before it, mines per transaction). */
export async function setIntervalMining(url: string, seconds: number): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'evm_setIntervalMining', params: [seconds] }),
  })
  if (!response.ok) throw new Error(`anvil refused interval mining: HTTP ${response.status}`)
}
