import { defineModule } from '../../space/module.ts'
import { PushService } from './service.ts'
import { pushKeysOf } from './keys.ts'
import { toBase64 } from '../../core/base64.ts'
import type { PushSender } from './sender.ts'

/**
 * The push service of each account engine open in this process, by the engine's private data
 * (`AccountData`, which the engine hands to every space it opens as `ctx.account`): a space's
 * sender is fed by its own engine's outbox, even with two devices of one account in a process.
 */
const accounts = new WeakMap<object, PushService>()

/**
 * Push as a module (chat.md "Push notifications", docs/push.md): an account service (token,
 * outbox, reconcile loop; the daemon attaches the push node link), a per-space sender, and a
 * commit hook that queues pushes for the space's own chat writes. The hook only queues: a write
 * never waits on the push node.
 */
export const pushModule = defineModule({
  name: 'push',
  dependencies: ['chat-read'],
  accountService: (ctx) => {
    const svc = new PushService(ctx)
    const data = (ctx as { accountData?: object }).accountData
    if (data) accounts.set(data, svc)
    return svc
  },
  service: ({ space, account }): PushSender | undefined => accounts.get(account)?.senderFor(space),
  onCommit: (change, sender) => sender?.committed(change),
  // The key mirror: the row carries the keys a receiver caches (chat.md "Push keys and payload").
  spaceRow: (space) => {
    const k = pushKeysOf(space.replica)
    return k ? { push: { spaceKey: toBase64(k.pushKey.publicKey), encKey: toBase64(k.encKey), encKeyId: k.encKeyId } } : undefined
  },
})
