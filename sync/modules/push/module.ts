import { defineModule } from '../../space/module.ts'
import { PushService } from './service.ts'
import { pushKeysOf } from './keys.ts'
import { toBase64 } from './base64.ts'
import type { PushSender } from './sender.ts'

/**
 * The push services of the accounts open in this process, by account id: a space's sender is
 * fed by its account's outbox, and a module context of a space names its account only by the
 * replica's identity. Entries go when the account closes.
 */
const accounts = new Map<string, PushService>()

/**
 * Push as a module (chat.md "Push notifications", docs/push.md): an account service (token,
 * outbox, reconcile loop; the daemon attaches the push node link), a per-space sender, and a
 * commit hook that queues pushes for the space's own chat writes. The hook only queues: a write
 * never waits on the push node.
 */
export const pushModule = defineModule({
  name: 'push',
  accountService: (ctx) => {
    const svc = new PushService(ctx)
    accounts.set(ctx.accountId, svc)
    const close = svc.close.bind(svc)
    svc.close = () => {
      close()
      if (accounts.get(ctx.accountId) === svc) accounts.delete(ctx.accountId)
    }
    return svc
  },
  service: ({ space }): PushSender | undefined => accounts.get(space.replica.me)?.senderFor(space),
  onCommit: (change, sender) => sender?.committed(change),
  // The key mirror: the row carries the keys a receiver caches (chat.md "Push keys and payload").
  spaceRow: (space) => {
    const k = pushKeysOf(space.replica)
    return k ? { push: { spaceKey: toBase64(k.pushKey.publicKey), encKey: toBase64(k.encKey), encKeyId: k.encKeyId } } : undefined
  },
})
