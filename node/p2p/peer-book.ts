import { errField, silentLogger, type Logger } from '../../sync/core/log.ts'
import { readFileSync } from 'node:fs'
import { SvcError } from '../../sync/core/errors.ts'
import { writeFileAtomic, type Durability } from '../account/files.ts'
import { P2P } from '../../sync/p2p/constants.ts'
import { parsePeerAddress, type PeerAddress } from './peer-address.ts'

export interface AddedPeer extends PeerAddress {
  /** `api`: added by `POST /v1/peers` (kept in the file); `config`: from the `peers` setting (this run). */
  source: 'api' | 'config'
  addedAt: number
}

interface PeersFile {
  version: 1
  peers: Array<{ peerId: string; multiaddr: string; addedAt: number }>
}

/**
 * The peers this device dials by address: those added over the API, persisted in the account
 * directory (mode 0600: the list says whom this account talks to), and those the daemon's
 * configuration names, kept for the run. One address per peer id; at most P2P.maxAddedPeers.
 */
export class PeerBook {
  private readonly peers = new Map<string, AddedPeer>()

  constructor(
    private readonly file: string | undefined,
    config: readonly string[],
    private readonly now: () => number,
    private readonly durability: Durability = 'normal',
    private readonly log: Logger = silentLogger,
  ) {
    for (const p of this.load()) this.peers.set(p.peerId, p)
    for (const text of config) {
      const a = parsePeerAddress(text)
      if (!this.peers.has(a.peerId)) this.peers.set(a.peerId, { ...a, source: 'config', addedAt: now() })
    }
  }

  list(): AddedPeer[] {
    return [...this.peers.values()]
  }

  get(peerId: string): AddedPeer | undefined {
    return this.peers.get(peerId)
  }

  /**
   * Adds a peer (or gives an added one a new address); `created` false when its peer id was
   * already there. 409 `peer.limit_reached` past P2P.maxAddedPeers.
   */
  add(a: PeerAddress): { peer: AddedPeer; created: boolean } {
    const old = this.peers.get(a.peerId)
    if (!old && this.peers.size >= P2P.maxAddedPeers) throw new SvcError('peer.limit_reached', `at most ${P2P.maxAddedPeers} peers can be added`, { limit: P2P.maxAddedPeers })
    const peer: AddedPeer = { ...a, source: 'api', addedAt: old?.addedAt ?? this.now() }
    this.peers.set(a.peerId, peer)
    this.save()
    return { peer, created: !old }
  }

  /**
   * Gives a listed peer the address it was found at again (after its old one failed); keeps
   * where it came from and when it was added. False when it is not listed.
   */
  readdress(peerId: string, multiaddr: string): boolean {
    const old = this.peers.get(peerId)
    if (!old) return false
    if (old.multiaddr === multiaddr) return true
    this.peers.set(peerId, { ...old, multiaddr })
    if (old.source === 'api') this.save()
    return true
  }

  /** Forgets a peer (a configured one until the next start); false when it is not listed. */
  remove(peerId: string): boolean {
    const old = this.peers.get(peerId)
    if (!old) return false
    this.peers.delete(peerId)
    if (old.source === 'api') this.save()
    return true
  }

  private load(): AddedPeer[] {
    if (!this.file) return []
    let raw: unknown
    try {
      raw = JSON.parse(readFileSync(this.file, 'utf8'))
    } catch {
      // Absent (nothing added yet) or unreadable: start empty; the next add rewrites it.
      return []
    }
    const list = (raw as Partial<PeersFile>)?.peers
    if (!Array.isArray(list)) return []
    const out: AddedPeer[] = []
    for (const e of list.slice(0, P2P.maxAddedPeers)) {
      try {
        const a = parsePeerAddress(e?.multiaddr)
        out.push({ ...a, source: 'api', addedAt: typeof e.addedAt === 'number' ? e.addedAt : this.now() })
      } catch (err) {
        // An entry this version cannot read is skipped, not fatal.
        this.log.warn('an added peer in the peers file is unreadable and skipped', { err: errField(err) })
      }
    }
    return out
  }

  private save() {
    if (!this.file) return
    const body: PeersFile = {
      version: 1,
      peers: this.list()
        .filter((p) => p.source === 'api')
        .map(({ peerId, multiaddr, addedAt }) => ({ peerId, multiaddr, addedAt })),
    }
    writeFileAtomic(this.file, `${JSON.stringify(body, null, 2)}\n`, 0o600, this.durability)
  }
}
