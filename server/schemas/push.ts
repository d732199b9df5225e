import { Type } from '@sinclair/typebox'

/**
 * chat.md "Endpoints / Push". `platform` takes the spec's `ios` and `android`, and two of ours
 * for self-hosted and browser clients: `ntfy` (the token is the UnifiedPush endpoint URL) and
 * `webpush` (the token is the browser's PushSubscription JSON); docs/push.md.
 */
export const PushPlatformSchema = Type.Union([Type.Literal('ios'), Type.Literal('android'), Type.Literal('ntfy'), Type.Literal('webpush')], {
  description: 'ios (APNs), android (FCM); ntfy (UnifiedPush endpoint URL) and webpush (PushSubscription JSON) for self-hosters and browsers',
})

export const PushTokenBody = Type.Object(
  {
    platform: PushPlatformSchema,
    token: Type.String({ minLength: 1, maxLength: 4096, description: 'the device token (or endpoint) the push node forwards to' }),
  },
  { additionalProperties: false },
)

export const PushTokenState = Type.Object({
  registered: Type.Boolean(),
  platform: Type.Optional(PushPlatformSchema),
})

export const PushSubscriptions = Type.Object({
  subscriptions: Type.Array(Type.Object({ spaceKey: Type.String({ description: 'base58 space push public key (not a space id)' }), topic: Type.String() })),
})
