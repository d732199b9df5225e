import { readFileSync } from 'node:fs'
import { SvcError } from '../../sync/core/errors.ts'
import { errField, silentLogger, type Logger } from '../../sync/core/log.ts'
import { HUB_WIRE } from '../../sync/protocol/hub-wire.ts'
import { writeFileAtomic, type Durability } from '../account/files.ts'
import { parsePeerAddress, type PeerAddress } from '../p2p/peer-address.ts'

/** Hubs one account may use: more gains no availability and costs a connection each. */
export const MAX_HUBS = 8

export interface HubEntry extends PeerAddress {
  /** An admission token the hub's operator minted for this account (`svc hub admit`), until the hub has taken it. */
  token?: string
  /** `api`: added by `POST /v1/hubs` or `svc hubs add` (kept in the file); `config`: the `hubs` setting (this run). */
  source: 'api' | 'config'
  addedAt: number
}

interface HubsFile {
  version: 1
  hubs: Array<{ peerId: string; multiaddr: string; token?: string; addedAt: number }>
}

/** A hub as the configuration or the API names it: `MULTIADDR` or `MULTIADDR#TOKEN`. */
export function parseHubSpec(text: unknown, token?: unknown): { address: PeerAddress; token?: string } {
  if (typeof text !== 'string') throw new SvcError('request.invalid_field', 'multiaddr must be a string', { field: 'multiaddr' })
  const [addr, fromSpec] = text.split('#', 2)
  const t = token ?? fromSpec
  if (t !== undefined && (typeof t !== 'string' || t.length === 0 || t.length > HUB_WIRE.maxTokenBytes || !/^[1-9A-HJ-NP-Za-km-z]+$/.test(t)))
    throw new SvcError('request.invalid_field', 'token must be the admission token the hub operator gave (base58)', { field: 'token' })
  return { address: parsePeerAddress(addr), ...(t !== undefined ? { token: t } : {}) }
}

/**
 * The hubs this device keeps its spaces with (docs/hub.md "Using a hub"): those added over the
 * API, kept in the account directory (mode 0600: it holds admission tokens), and those the
 * configuration names, kept for the run.
 */
export class HubBook {
  private readonly hubs = new Map<string, HubEntry>()

  constructor(
    private readonly file: string | undefined,
    config: readonly string[],
    private readonly now: () => number,
    private readonly durability: Durability = 'normal',
    private readonly log: Logger = silentLogger,
  ) {
    for (const h of this.load()) this.hubs.set(h.peerId, h)
    for (const text of config) {
      const { address, token } = parseHubSpec(text)
      if (!this.hubs.has(address.peerId)) this.hubs.set(address.peerId, { ...address, ...(token ? { token } : {}), source: 'config', addedAt: now() })
    }
  }

  list(): HubEntry[] {
    return [...this.hubs.values()]
  }

  get(peerId: string): HubEntry | undefined {
    return this.hubs.get(peerId)
  }

  add(a: PeerAddress, token?: string): { hub: HubEntry; created: boolean } {
    const old = this.hubs.get(a.peerId)
    if (!old && this.hubs.size >= MAX_HUBS) throw new SvcError('peer.limit_reached', `at most ${MAX_HUBS} hubs can be added`, { limit: MAX_HUBS })
    const hub: HubEntry = { ...a, ...((token ?? old?.token) ? { token: token ?? old?.token } : {}), source: 'api', addedAt: old?.addedAt ?? this.now() }
    this.hubs.set(a.peerId, hub)
    this.save()
    return { hub, created: !old }
  }

  /** The hub took the token: it is not needed again (and is not kept where it could leak). */
  tokenTaken(peerId: string): void {
    const h = this.hubs.get(peerId)
    if (!h?.token) return
    delete h.token
    if (h.source === 'api') this.save()
  }

  remove(peerId: string): boolean {
    const old = this.hubs.get(peerId)
    if (!old) return false
    this.hubs.delete(peerId)
    if (old.source === 'api') this.save()
    return true
  }

  private load(): HubEntry[] {
    if (!this.file) return []
    let raw: unknown
    try {
      raw = JSON.parse(readFileSync(this.file, 'utf8'))
    } catch {
      return []
    }
    const list = (raw as Partial<HubsFile>)?.hubs
    if (!Array.isArray(list)) return []
    const out: HubEntry[] = []
    for (const e of list.slice(0, MAX_HUBS)) {
      try {
        const { address, token } = parseHubSpec(e?.multiaddr, e?.token)
        out.push({ ...address, ...(token ? { token } : {}), source: 'api', addedAt: typeof e.addedAt === 'number' ? e.addedAt : this.now() })
      } catch (err) {
        this.log.warn('a hub in the hubs file is unreadable and skipped', { err: errField(err) })
      }
    }
    return out
  }

  private save() {
    if (!this.file) return
    const body: HubsFile = {
      version: 1,
      hubs: this.list()
        .filter((h) => h.source === 'api')
        .map(({ peerId, multiaddr, token, addedAt }) => ({ peerId, multiaddr, ...(token ? { token } : {}), addedAt })),
    }
    writeFileAtomic(this.file, `${JSON.stringify(body, null, 2)}\n`, 0o600, this.durability)
  }
}
