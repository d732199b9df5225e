import { lookup as dnsLookup } from 'node:dns/promises'
import { BlockList, isIP, type LookupFunction } from 'node:net'

/**
 * Where a push node may connect when a subscriber names the endpoint (Web Push): only hosts
 * whose every address is public. A stranger can mint a space key and register any URL, so
 * without this the node would POST attacker bytes into the operator's own network.
 */

/** Address ranges that are not the public internet (IANA special-purpose registries, v4 and v6). */
const NOT_PUBLIC = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  // IPv4-compatible (deprecated) addresses: never a real host.
  ['::', 96],
] as const)
  NOT_PUBLIC.addSubnet(net, prefix, 'ipv6')

/** The 32 bits after `at` (a hex-group index) of an expanded IPv6 address, as dotted IPv4. */
function embeddedV4(groups: number[], at: number): string {
  const [hi, lo] = [groups[at], groups[at + 1]]
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`
}

/** An IPv6 address as its eight 16-bit groups (a dotted IPv4 tail included). */
function groupsOf(v6: string): number[] {
  let s = v6.toLowerCase().split('%')[0]
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s)
  if (dotted) {
    const o = dotted[1].split('.').map(Number)
    s = `${s.slice(0, -dotted[1].length)}${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`
  }
  const [head, tail] = s.includes('::') ? s.split('::') : [s, undefined]
  const h = head ? head.split(':') : []
  const t = tail ? tail.split(':') : []
  const fill: string[] = tail === undefined ? [] : new Array<string>(8 - h.length - t.length).fill('0')
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16))
}

/**
 * Whether an address is on the public internet. IPv6 forms that carry an IPv4 address (mapped
 * `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that IPv4 address.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return !NOT_PUBLIC.check(address, 'ipv4')
  if (family !== 6) return false
  const g = groupsOf(address)
  if (g.length !== 8 || g.some((x) => !Number.isInteger(x) || x < 0 || x > 0xffff)) return false
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return isPublicAddress(embeddedV4(g, 6))
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return isPublicAddress(embeddedV4(g, 6))
  if (g[0] === 0x2002) return isPublicAddress(embeddedV4(g, 1))
  return !NOT_PUBLIC.check(address, 'ipv6')
}

export interface ResolvedAddress {
  address: string
  family: number
}
/** Name resolution, replaceable so tests can point a name at a loopback fake. */
export type Resolve = (host: string) => Promise<ResolvedAddress[]>

// eslint-disable-next-line @typescript-eslint/no-deprecated -- verbatim is deprecated for `order`, which Node 20's types lack; both mean addresses in the resolver's order
export const systemResolve: Resolve = (host) => dnsLookup(host, { all: true, verbatim: true })

/** Why an endpoint was not contacted; the node drops such a token (no request left). */
export class EndpointRefused extends Error {}

/**
 * Resolves a host once and checks every address it gave: one private address refuses the host
 * (a rebinding name hands out a public and a private one). Answers the address to connect to.
 */
export async function checkedAddress(host: string, resolve: Resolve, allowPrivate: boolean): Promise<ResolvedAddress> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  const literal = isIP(bare)
  const addrs = literal ? [{ address: bare, family: literal }] : await resolve(bare)
  if (addrs.length === 0) throw new EndpointRefused(`${bare} has no address`)
  if (!allowPrivate) {
    const bad = addrs.find((a) => !isPublicAddress(a.address))
    if (bad) throw new EndpointRefused(`${bare} resolves to a non-public address`)
  }
  return addrs[0]
}

/**
 * A `lookup` for `http(s).request` that answers only the address already checked: the socket
 * connects where the check looked, and a second resolution (DNS rebinding) never happens.
 */
export function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return ((_host: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: pinned.address, family: pinned.family }])
    else cb(null, pinned.address, pinned.family)
  }) as LookupFunction
}
