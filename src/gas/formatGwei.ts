const weiPerGwei = 1_000_000_000n

/** Wei as a decimal Gwei string with up to 9 decimals and no trailing zeros: 23227829059n → "23.227829059". */
export function formatGwei(wei: bigint): string {
  const sign = wei < 0n ? '-' : ''
  const abs = wei < 0n ? -wei : wei
  const whole = (abs / weiPerGwei).toString()
  const fraction = abs % weiPerGwei
  if (fraction === 0n) return `${sign}${whole}`
  return `${sign}${whole}.${fraction.toString().padStart(9, '0').replace(/0+$/, '')}`
}
