import type { Env } from '../../core/env.ts'
import type { JsonObject } from '../../crdt/ops.ts'
import type { AccountData } from '../../space/account-data.ts'
import { AGENT_LIMITS } from './limits.ts'

/** The account dataset (tech space, the account's own devices only) where devices claim the agent. */
export const PRESENCE_DS = 'agent_presence'
export const AGENT_APP = 'svc-agent'

export interface ElectionView {
  app: string
  enabled: boolean
  /** This device is the winner: it watches chat and adopts floating triggers. */
  active: boolean
  peerId: string
  winner: string | null
  state: 'active' | 'standby' | 'pruned'
}

/**
 * The agent election (chat.md "Agent election per chat"): each running device claims the app
 * slug in the account's `agent_presence` records (`{app, claimedAt, beat}` under its peer id)
 * and beats every `heartbeatMs`. The winner is the live claimant (a beat within `liveMs` of this
 * device's clock, device row not pruned) with the earliest claim, ties by peer id: every device
 * computes the same winner from the same records, and a device that restarts claims anew, so it
 * does not take the slot back from the standby that took over. One winner serves every chat of
 * the account, so each chat has one agent.
 */
export class Election {
  /** Set by the first beat: the claim's age orders the claimants. */
  private claimedAt = Number.POSITIVE_INFINITY

  constructor(
    private readonly data: AccountData,
    private readonly env: Env,
    readonly peerId: string,
    private readonly prunedDevices: () => Promise<Set<string>>,
    readonly enabled = true,
  ) {}

  /** Claims (first call) or beats; a disabled agent withdraws its claim. */
  async beat(): Promise<void> {
    if (this.claimedAt === Number.POSITIVE_INFINITY) this.claimedAt = this.env.now()
    await this.data.write([{ op: 'set', ds: PRESENCE_DS, id: this.peerId, path: '', value: { app: this.enabled ? AGENT_APP : '', claimedAt: this.claimedAt, beat: this.env.now() } }])
  }

  /** Withdraws the claim (a clean stop hands the slot over at once instead of after `liveMs`). */
  async withdraw(): Promise<void> {
    await this.data.write([{ op: 'set', ds: PRESENCE_DS, id: this.peerId, path: 'app', value: '' }])
  }

  /**
   * Whether this device's win is a takeover: another device of the account claimed before it
   * (it was, or could have been, the winner). A device restarting alone is not taking over:
   * messages that arrived while it was down never fire later (chat.md "Spec by kind").
   */
  async isTakeover(): Promise<boolean> {
    const pruned = await this.prunedDevices()
    for (const { id, value } of await this.data.list(PRESENCE_DS)) {
      const v = value as JsonObject
      if (id === this.peerId || pruned.has(id) || typeof v.claimedAt !== 'number') continue
      if (v.claimedAt < this.claimedAt || (v.claimedAt === this.claimedAt && id < this.peerId)) return true
    }
    return false
  }

  async view(): Promise<ElectionView> {
    const now = this.env.now()
    const pruned = await this.prunedDevices()
    const claims: Array<{ id: string; claimedAt: number }> = []
    for (const { id, value } of await this.data.list(PRESENCE_DS)) {
      const v = value as JsonObject
      if (v.app !== AGENT_APP || pruned.has(id)) continue
      const beat = typeof v.beat === 'number' ? v.beat : 0
      const live = id === this.peerId ? this.enabled : now - beat <= AGENT_LIMITS.liveMs
      if (live) claims.push({ id, claimedAt: typeof v.claimedAt === 'number' ? v.claimedAt : 0 })
    }
    claims.sort((a, b) => a.claimedAt - b.claimedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    const winner = claims[0]?.id ?? null
    const state = pruned.has(this.peerId) ? 'pruned' : winner === this.peerId ? 'active' : 'standby'
    return { app: AGENT_APP, enabled: this.enabled, active: state === 'active', peerId: this.peerId, winner, state }
  }
}
