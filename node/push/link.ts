import type { CryptoProvider } from '../../sync/crypto/provider.ts'
import type { PushNodeLink } from '../../sync/modules/push/outbox.ts'
import { encodePushRequest, signSend, signSubscribe, type PushReply } from '../../sync/protocol/push-wire.ts'

/**
 * The module's typed link over the wire codec: each request signed with its space push key,
 * encoded, and handed to `request` (a libp2p round trip in the daemon, the node's core in
 * process in tests).
 */
export function wireLink(request: (bytes: Uint8Array) => Promise<PushReply>, crypto: CryptoProvider): PushNodeLink {
  return {
    subscribe: async ({ pushKey, ...r }) => request(encodePushRequest(await signSubscribe(crypto, pushKey, r))),
    unregister: async (r) => request(encodePushRequest({ op: 'unregister', ...r })),
    send: async ({ pushKey, ...r }) => request(encodePushRequest(await signSend(crypto, pushKey, r))),
  }
}
