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
 * slug once, when its agent starts, in the account's `agent_presence` records (`{app, claimedAt}`
 * under its peer id). Liveness is not stored: a claim counts as live when it is this device's own
 * or when `liveDevices` names its device (connected now over P2P, the same account proved on the
 * link), or did within the last `liveMs` of this device's clock, so a reconnect blip does not
 * flap. A stored heartbeat would be a signed change every few seconds per device, kept forever
 * in the DAG and synced to every device of the account.
 * The winner is the live claimant (device row not pruned) with the earliest claim, ties by peer
 * id: devices that see the same claims and links compute the same winner, and a device that
 * restarts claims anew, so it does not take the slot back from the standby that took over. One
 * winner serves every chat of the account, so each chat has one agent.
 */
export class Election {
  /** Set by the claim: the claim's age orders the claimants. */
  private claimedAt = Number.POSITIVE_INFINITY
  /** When each linked device was last seen linked (this device's clock); entries past `liveMs` are dropped. */
  private readonly lastLinked = new Map<string, number>()

  constructor(
    private readonly data: AccountData,
    private readonly env: Env,
    readonly peerId: string,
    private readonly prunedDevices: () => Promise<Set<string>>,
    readonly enabled = true,
    /** Peer ids of this account's devices linked to this one now; none without P2P. */
    private readonly liveDevices: () => ReadonlySet<string> = () => new Set(),
  ) {}

  /**
   * Writes this device's claim (a disabled agent writes a withdrawn one). Once per start: the
   * value does not change afterwards, and writing it again commits nothing.
   */
  async claim(): Promise<void> {
    if (this.claimedAt === Number.POSITIVE_INFINITY) this.claimedAt = this.env.now()
    await this.data.write([{ op: 'set', ds: PRESENCE_DS, id: this.peerId, path: '', value: { app: this.enabled ? AGENT_APP : '', claimedAt: this.claimedAt } }])
  }

  /** Withdraws the claim (a clean stop hands the slot over as soon as the record arrives, not after `liveMs`). */
  async withdraw(): Promise<void> {
    await this.data.write([{ op: 'set', ds: PRESENCE_DS, id: this.peerId, path: 'app', value: '' }])
  }

  /** Whether another device's claim is live: linked now, or within `liveMs` of when it last was. */
  private linkedRecently(now: number): (id: string) => boolean {
    for (const id of this.liveDevices()) this.lastLinked.set(id, now)
    for (const [id, at] of this.lastLinked) if (now - at > AGENT_LIMITS.liveMs) this.lastLinked.delete(id)
    return (id) => this.lastLinked.has(id)
  }

  /**
   * Whether this device's win is a takeover: since its agent started, this device stood by
   * behind another live winner (it saw another device hold the slot). A device that starts, or
   * restarts, while no other device holds the slot is not taking over, whoever claimed before it
   * (a withdrawn or unreachable claim included): messages that arrived while no agent ran never
   * fire later (chat.md "Spec by kind", docs/agents.md "Election").
   */
  isTakeover(): Promise<boolean> {
    return Promise.resolve(this.stoodBy)
  }

  /** Set once a view named another device the winner while this one ran. */
  private stoodBy = false

  async view(): Promise<ElectionView> {
    const linked = this.linkedRecently(this.env.now())
    const pruned = await this.prunedDevices()
    const claims: Array<{ id: string; claimedAt: number }> = []
    for (const { id, value } of await this.data.list(PRESENCE_DS)) {
      const v = value as JsonObject
      if (v.app !== AGENT_APP || pruned.has(id)) continue
      const live = id === this.peerId ? this.enabled : linked(id)
      if (live) claims.push({ id, claimedAt: typeof v.claimedAt === 'number' ? v.claimedAt : 0 })
    }
    claims.sort((a, b) => a.claimedAt - b.claimedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    const winner = claims[0]?.id ?? null
    const state = pruned.has(this.peerId) ? 'pruned' : winner === this.peerId ? 'active' : 'standby'
    if (state === 'standby' && winner !== null) this.stoodBy = true
    return { app: AGENT_APP, enabled: this.enabled, active: state === 'active', peerId: this.peerId, winner, state }
  }
}
