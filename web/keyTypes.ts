/** A key as the admin API shows it (src/auth/keyView.ts): never its secret or the secret's hash. */
export type KeyView = {
  key: string
  name: string
  account: string
  plan: string
  status: 'active' | 'revoked'
  createdAt: string
  revokedAt: string | null
  dailyCredits: number | null
  creditsPerSecond: number | null
  accountDailyCredits: number | null
  accountCreditsPerSecond: number | null
  failover: boolean
  hasSecret: boolean
  requireSecret: boolean
  networks: string[]
  allowlists: Record<AllowlistKind, string[]>
  jwt: { required: boolean; audience: string | null; publicKeys: { kid: string; alg: string }[] }
}

export type Plan = {
  dailyCredits: number | null
  creditsPerSecond: number | null
  failover: boolean
  keysPerAccount: number | null
}

export const allowlistKinds = [
  { kind: 'contracts', path: 'contracts', label: 'Contracts', hint: '0x… contract addresses' },
  { kind: 'userAgents', path: 'user-agents', label: 'User agents', hint: 'substrings of User-Agent' },
  { kind: 'origins', path: 'origins', label: 'Origins', hint: 'https://app.example, *.example.com' },
  { kind: 'methods', path: 'methods', label: 'Methods', hint: 'eth_call, eth_getLogs' },
] as const

export type AllowlistKind = (typeof allowlistKinds)[number]['kind']
