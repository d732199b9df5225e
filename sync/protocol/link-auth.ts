import type { Env } from '../core/env.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import type { KeyPair } from '../crypto/keys.ts'
import { authBytes, signAuth, verifyAuth } from './auth.ts'
import { BoundedMap } from './bounded-map.ts'
import { NONCE_BYTES, PEER_LIMITS } from './limits.ts'
import type { AuthMsg, HelloMsg } from './messages.ts'

/**
 * Link authentication (docs/protocol.md, hello/auth): one challenge per link epoch, answered by
 * a signature bound to both transport peer ids and the nonce; once it verifies, every message on
 * the link is from that account. Holds, per link, our nonce, the proven identity and the few
 * space messages that arrived before the peer authenticated. Links the transport reported up,
 * or that authenticated, are kept until they go down; a link that exists only because a peer
 * sent something before its link came up is one of at most `maxUnauthenticatedLinks`.
 */

interface Link {
  /** Our challenge to the peer, fresh per link epoch. */
  nonce: Uint8Array
  /** The account the peer proved it holds, once it has. */
  identity?: string
  /** Space messages that arrived before the peer authenticated, handled once it does. */
  stash: Uint8Array[]
  stashBytes: number
}

const STASH_MAX = 8
const STASH_MAX_BYTES = 1024 * 1024

export interface LinkAuthOptions {
  key: KeyPair
  /** Our account identity (the key's public key, base58). */
  me: string
  /** Our transport peer id. */
  peerId: string
  crypto: CryptoProvider
  env: Env
}

export class LinkAuth {
  private readonly links = new Map<string, Link>()
  private readonly pending = new BoundedMap<string, Link>(PEER_LIMITS.maxUnauthenticatedLinks)

  constructor(private readonly o: LinkAuthOptions) {}

  /** A link came up: a fresh epoch; returns our challenge. */
  up(peer: string): HelloMsg {
    const link = this.fresh()
    this.pending.delete(peer)
    this.links.set(peer, link)
    return this.hello(link)
  }

  /** The link went down: forget its authentication and its stash. */
  down(peer: string): void {
    this.links.delete(peer)
    this.pending.delete(peer)
  }

  /** How many links are held (for tests of the bounds). */
  get size() {
    return this.links.size + this.pending.size
  }

  /** Our current challenge to the peer (the link's epoch begins if it has not). */
  challenge(peer: string): HelloMsg {
    return this.hello(this.link(peer))
  }

  identityOf(peer: string): string | undefined {
    return this.links.get(peer)?.identity
  }

  /** Answers a peer's challenge: the signature is bound to this link and this nonce only. */
  async answer(peer: string, m: HelloMsg): Promise<AuthMsg> {
    const signature = await signAuth(this.o.crypto, this.o.key, authBytes(this.o.me, m.identity, this.o.peerId, peer, m.nonce))
    return { type: 'auth', identity: this.o.me, signature }
  }

  /** Checks a peer's answer to our challenge; returns the identity when it is new on this link. */
  async verify(peer: string, m: AuthMsg): Promise<{ ok: boolean; changed: boolean }> {
    const link = this.links.get(peer) ?? this.pending.peek(peer)
    const ok = !!link && (await verifyAuth(this.o.crypto, m.identity, authBytes(m.identity, this.o.me, peer, this.o.peerId, link.nonce), m.signature))
    if (!ok || !link) return { ok: false, changed: false }
    const changed = link.identity !== m.identity
    link.identity = m.identity
    if (this.pending.delete(peer)) this.links.set(peer, link)
    return { ok: true, changed }
  }

  /** Keeps a space message of a peer that has not authenticated; false when the stash is full. */
  stash(peer: string, raw: Uint8Array): boolean {
    const link = this.link(peer)
    if (link.stash.length >= STASH_MAX || link.stashBytes + raw.length > STASH_MAX_BYTES) return false
    link.stash.push(raw)
    link.stashBytes += raw.length
    return true
  }

  /** The stashed messages of a peer that has just authenticated (emptied). */
  takeStash(peer: string): Uint8Array[] {
    const link = this.links.get(peer)
    if (!link?.identity) return []
    link.stashBytes = 0
    return link.stash.splice(0)
  }

  private hello(link: Link): HelloMsg {
    return { type: 'hello', identity: this.o.me, nonce: link.nonce }
  }

  private fresh(): Link {
    return { nonce: this.o.env.randomBytes(NONCE_BYTES), stash: [], stashBytes: 0 }
  }

  private link(peer: string): Link {
    let l = this.links.get(peer) ?? this.pending.get(peer)
    if (!l) this.pending.set(peer, (l = this.fresh()))
    return l
  }
}
