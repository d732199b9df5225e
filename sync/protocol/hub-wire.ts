import { decodeCanonical, encodeCanonical } from '../core/encoding.ts'
import { isBase58 } from '../core/ids.ts'

/**
 * The hub's control protocol (`/svc/hub/1.0.0`, docs/hub.md "Protocol"): a device tells a hub
 * which spaces to keep, and the hub says where each stands. Head sync itself is unchanged: a
 * hub speaks it as any peer does. One CBOR array per frame, version first.
 *
 * ```
 * register   [1, 1, reqId, token, [spaceId...]]   keep these spaces (token: an admission token, or empty bytes)
 * unregister [1, 2, reqId, [spaceId...]]          stop keeping them for this account
 * status     [1, 3, reqId, code, [[spaceId, code]...], [spaces, bytes, maxSpaces, maxBytes]]
 *                                                  the answer (reqId 0: the hub's own notice, say a quota reached)
 * ```
 *
 * The account is the one the device proved on its head-sync link; a frame from a peer that
 * proved none (waited for a few seconds, node/hub/control-protocol.ts) is answered
 * `not_admitted` and nothing else. Pure functions: bytes in, values
 * out; anything malformed is a MalformedHubFrame.
 */
export const HUB_WIRE_VERSION = 1

export const HUB_WIRE = {
  protocol: '/svc/hub/1.0.0',
  /** Space ids per register or unregister. */
  maxSpacesPerRequest: 256,
  maxSpaceIdChars: 128,
  /** An admission token's text (docs/hub.md "Admission"). */
  maxTokenBytes: 512,
  maxFrameBytes: 64 * 1024,
} as const

/** Where an account stands with the hub. */
export const HUB_CODES = ['ok', 'not_admitted', 'bad_token'] as const
export type HubCode = (typeof HUB_CODES)[number]

/**
 * Where one space stands: `kept`; `pending` (kept, waiting for its ACL to show the account
 * reads it); `not_reader` (the ACL says the account may not read it: not kept for it);
 * `over_spaces`, `over_bytes` (the account's quotas); `rate_limited` (changes refused for a
 * while: the device offers them again); `unknown` (a code this side does not know).
 */
export const SPACE_CODES = ['kept', 'pending', 'not_reader', 'over_spaces', 'over_bytes', 'rate_limited', 'released'] as const
export type SpaceCode = (typeof SPACE_CODES)[number] | 'unknown'

export interface HubUsage {
  spaces: number
  bytes: number
  maxSpaces: number
  maxBytes: number
}

export type HubMessage =
  | { kind: 'register'; reqId: number; token: Uint8Array; spaceIds: string[] }
  | { kind: 'unregister'; reqId: number; spaceIds: string[] }
  | { kind: 'status'; reqId: number; code: HubCode | 'unknown'; spaces: Array<[string, SpaceCode]>; usage: HubUsage }

const KIND = { register: 1, unregister: 2, status: 3 } as const

export class MalformedHubFrame extends Error {}

export function encodeHubMessage(m: HubMessage): Uint8Array {
  switch (m.kind) {
    case 'register':
      return encodeCanonical([HUB_WIRE_VERSION, KIND.register, m.reqId, m.token, m.spaceIds])
    case 'unregister':
      return encodeCanonical([HUB_WIRE_VERSION, KIND.unregister, m.reqId, m.spaceIds])
    case 'status': {
      const spaces = m.spaces.map(([id, code]) => [id, code === 'unknown' ? 255 : SPACE_CODES.indexOf(code)])
      const code = m.code === 'unknown' ? 255 : HUB_CODES.indexOf(m.code)
      const u = m.usage
      return encodeCanonical([HUB_WIRE_VERSION, KIND.status, m.reqId, code, spaces, [u.spaces, u.bytes, u.maxSpaces, u.maxBytes]])
    }
  }
}

export function decodeHubMessage(bytes: Uint8Array): HubMessage {
  if (bytes.byteLength > HUB_WIRE.maxFrameBytes) throw new MalformedHubFrame('frame too large')
  let v: unknown
  try {
    v = decodeCanonical(bytes)
  } catch {
    throw new MalformedHubFrame('not canonical CBOR')
  }
  if (!Array.isArray(v) || v[0] !== HUB_WIRE_VERSION) throw new MalformedHubFrame('bad version')
  const a = v as unknown[]
  const reqId = uint(a[2])
  switch (a[1]) {
    case KIND.register:
      if (a.length !== 5 || !(a[3] instanceof Uint8Array) || a[3].byteLength > HUB_WIRE.maxTokenBytes) throw new MalformedHubFrame('bad register')
      return { kind: 'register', reqId, token: a[3], spaceIds: spaceIds(a[4]) }
    case KIND.unregister:
      if (a.length !== 4) throw new MalformedHubFrame('bad unregister')
      return { kind: 'unregister', reqId, spaceIds: spaceIds(a[3]) }
    case KIND.status: {
      if (a.length !== 6 || !Array.isArray(a[4]) || a[4].length > HUB_WIRE.maxSpacesPerRequest || !Array.isArray(a[5]) || a[5].length !== 4)
        throw new MalformedHubFrame('bad status')
      const spaces = (a[4] as unknown[]).map((x): [string, SpaceCode] => {
        if (!Array.isArray(x) || x.length !== 2) throw new MalformedHubFrame('bad space status')
        return [spaceId(x[0]), SPACE_CODES[uint(x[1])] ?? 'unknown']
      })
      const [spacesN, bytesN, maxSpaces, maxBytes] = (a[5] as unknown[]).map(uint)
      return { kind: 'status', reqId, code: HUB_CODES[uint(a[3])] ?? 'unknown', spaces, usage: { spaces: spacesN, bytes: bytesN, maxSpaces, maxBytes } }
    }
    default:
      throw new MalformedHubFrame('unknown kind')
  }
}

function uint(x: unknown): number {
  if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0) throw new MalformedHubFrame('not an unsigned integer')
  return x
}

function spaceId(x: unknown): string {
  if (!isBase58(x) || x.length > HUB_WIRE.maxSpaceIdChars) throw new MalformedHubFrame('bad space id')
  return x
}

function spaceIds(x: unknown): string[] {
  if (!Array.isArray(x) || x.length > HUB_WIRE.maxSpacesPerRequest) throw new MalformedHubFrame('bad space list')
  return x.map(spaceId)
}
