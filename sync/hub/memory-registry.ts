import type { HubRegistry } from './hub-core.ts'

/**
 * A hub's registry in memory: the simulator's hub and tests. `bytesOf` says how many bytes a
 * space holds (the hub's replicas know; the node's stores count them).
 */
export class MemoryHubRegistry implements HubRegistry {
  private readonly admittedAccounts = new Map<string, 'config' | 'token'>()
  private readonly bySpace = new Map<string, Set<string>>()
  private readonly byAccount = new Map<string, Set<string>>()

  constructor(private readonly bytesOf: (spaceId: string) => number = () => 0) {}

  async admit(account: string, via: 'config' | 'token'): Promise<void> {
    this.admittedAccounts.set(account, via)
  }
  async admitted(account: string): Promise<boolean> {
    return this.admittedAccounts.has(account)
  }
  async register(account: string, spaceId: string): Promise<void> {
    add(this.bySpace, spaceId, account)
    add(this.byAccount, account, spaceId)
  }
  async unregister(account: string, spaceId: string): Promise<void> {
    this.bySpace.get(spaceId)?.delete(account)
    this.byAccount.get(account)?.delete(spaceId)
  }
  async registrations(account: string): Promise<string[]> {
    return [...(this.byAccount.get(account) ?? [])].sort()
  }
  async registrants(spaceId: string): Promise<string[]> {
    return [...(this.bySpace.get(spaceId) ?? [])].sort()
  }
  async usage(account: string): Promise<{ spaces: number; bytes: number }> {
    const spaces = [...(this.byAccount.get(account) ?? [])]
    return { spaces: spaces.length, bytes: spaces.reduce((n, s) => n + this.bytesOf(s), 0) }
  }
}

function add(m: Map<string, Set<string>>, k: string, v: string) {
  let s = m.get(k)
  if (!s) m.set(k, (s = new Set()))
  s.add(v)
}
