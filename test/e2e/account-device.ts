/**
 * Another device of an account, in the test process: its own libp2p key, the account's key, a
 * memory replica of one space and the daemon's head-sync session and driver. It fetches the space
 * like any device of that account would, then does what a hostile member's software could: sign
 * a change of its own making and send it straight down the wire, as a step of an exchange nobody
 * opened (the way sim/adversary.ts pushes), so the receiving daemon's checks are all that stand
 * in the way.
 */
import { multiaddr } from '@multiformats/multiaddr'
import { nodeCryptoProvider } from '../../node/crypto/node-provider.ts'
import { realTimer } from '../../node/daemon/p2p-service.ts'
import { createSvcNode, type SvcLibp2p } from '../../node/p2p/libp2p-node.ts'
import { Libp2pTransport } from '../../sync/p2p/libp2p-transport.ts'
import { EVENTS } from '../../sync/core/events-limits.ts'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { seal } from '../../sync/crypto/box.ts'
import { keyPairFromSeed, type KeyPair } from '../../sync/crypto/keys.ts'
import { signChange, type Change } from '../../sync/dag/change.ts'
import { encodeMessage } from '../../sync/protocol/messages.ts'
import { SyncSession } from '../../sync/protocol/session.ts'
import { SyncDriver } from '../../sync/protocol/sync-driver.ts'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { randomBytes } from 'node:crypto'

const crypto = nodeCryptoProvider({ verify: 'sync' })

export class AccountDevice {
  private constructor(
    readonly key: KeyPair,
    readonly replica: SpaceReplica,
    private readonly node: SvcLibp2p,
    private readonly transport: Libp2pTransport,
    readonly session: SyncSession,
    private readonly driver: SyncDriver,
  ) {}

  static async start(key: KeyPair, spaceId: string): Promise<AccountDevice> {
    const replica = await SpaceReplica.open({ storage: new MemoryStorageAdapter(), crypto, env: systemEnv }, spaceId, key)
    const node = await createSvcNode({ deviceKey: keyPairFromSeed(new Uint8Array(randomBytes(32))), listen: ['/ip4/127.0.0.1/tcp/0'] })
    const transport = await Libp2pTransport.start(node)
    const session = new SyncSession({ host: { space: (id) => (id === spaceId ? replica : undefined) }, key, peerId: transport.peerId, crypto, env: systemEnv })
    const driver = new SyncDriver({ transport, session, timer: realTimer, timeoutMs: 60_000 })
    return new AccountDevice(key, replica, node, transport, session, driver)
  }

  async dial(addr: string, peerId: string) {
    if (this.transport.peers().includes(peerId)) return
    const up = new Promise<void>((r) =>
      this.transport.onPeerUp((p) => {
        if (p === peerId) r()
      }),
    )
    await this.node.dial(multiaddr(addr))
    await up
  }

  /** Rounds with a daemon until in sync (this device is then authenticated to it). */
  async syncWith(peerId: string) {
    for (let i = 0; i < 20; i++) {
      const r = await this.driver.syncSpace(peerId, this.replica.spaceId)
      if (r.outcome === 'in_sync') return
      if (!r.ok) throw new Error(`round with ${peerId}: ${r.outcome} ${r.error ?? ''}`)
    }
    throw new Error(`no sync with ${peerId} after 20 rounds`)
  }

  /**
   * A well-formed write signed with this account's key: on the object's heads, citing the ACL
   * head this replica holds, sealed under its current read key. Whether the account may write
   * is exactly what it does not check. `set` is the one op it makes (default `v` = 'forged').
   */
  async craftWrite(objectId: string, dataset: string, recordId: string, seq = 1_000_000, set: { path: string; value: unknown } = { path: 'v', value: 'forged' }): Promise<Change> {
    const rep = this.replica
    const cite = rep.acl.citation()
    const aclHeadId = 'head' in cite ? cite.head : cite.merge[0]
    const readKeyId = rep.acl.stateAt([aclHeadId]).readKeyId!
    const readKey = rep.keyring.get(readKeyId)
    if (!readKey) throw new Error('this device reaches no read key')
    const meta = rep.treeMeta(objectId)
    if (!meta) throw new Error(`object ${objectId} is not on this device`)
    const payload = seal(systemEnv, readKey, encodeCanonical({ ops: [{ op: 'set', ds: dataset, id: recordId, path: set.path, value: set.value }] }))
    return signChange(crypto, this.key, {
      spaceId: rep.spaceId,
      treeId: objectId,
      prevIds: meta.heads,
      aclHeadId,
      seq,
      lamport: meta.maxLamport + 1,
      timestamp: Date.now(),
      readKeyId,
      payload,
    })
  }

  /**
   * Sends changes to a daemon as a step it never asked for, then runs a round on the same link:
   * the daemon reads a link's messages in order, so once the round is done the step was read
   * (an unsolicited push from a reader gets no reply of its own). The round's outcome.
   */
  async push(peerId: string, changes: Change[]): Promise<string> {
    const req = 0x7fff_0000 + Math.floor(Math.random() * 0xffff)
    this.transport.send(peerId, encodeMessage({ type: 'step', spaceId: this.replica.spaceId, req, hop: 1, ranges: [], heads: [], wants: [], changes: changes.map((c) => c.raw) }))
    const r = await this.driver.syncSpace(peerId, this.replica.spaceId)
    return r.ok ? 'read' : `round after the push: ${r.outcome} ${r.error ?? ''}`
  }

  /**
   * Listens on the events protocol (`/svc/events/1.0.0`) as this device, and counts the frames
   * any peer sends it (it opens none, judges none): what a relay chose to forward to it.
   */
  async listenEvents(): Promise<{ frames: () => number; close: () => Promise<void> }> {
    const t = await Libp2pTransport.start(this.node, { protocol: EVENTS.protocol, maxFrameBytes: EVENTS.maxFrameBytes })
    let frames = 0
    t.onMessage(() => {
      frames++
    })
    return { frames: () => frames, close: () => t.close() }
  }

  async close() {
    await this.driver.close()
    await this.transport.close()
    await this.node.stop()
  }
}
