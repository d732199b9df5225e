import { readFileSync } from 'node:fs'
import { multiaddr } from '@multiformats/multiaddr'
import { writeFileAtomic, type Durability } from '../account/files.ts'

/**
 * The P2P port kept across restarts (issue 39, item 4): peers that added this device by
 * address (`/ip4/.../tcp/PORT/p2p/ID`) kept dialing the port of its previous run, which a
 * random port (`tcp/0`, the default) changed at every start. The port the node listens on is
 * written to the account directory (P2P.portFile); at the next start, the first plain TCP
 * listen address that asks for port 0 asks for that port instead. When it is taken, the caller
 * starts again with the configured addresses (any free port) and the new port is kept.
 */

interface PortFile {
  version: 1
  tcp: number
}

/** The port of the previous run, if the file holds one. */
export function savedPort(file: string | undefined): number | undefined {
  if (!file) return undefined
  try {
    const raw = JSON.parse(readFileSync(file, 'utf8')) as Partial<PortFile>
    return Number.isInteger(raw.tcp) && raw.tcp! > 0 && raw.tcp! <= 65535 ? raw.tcp : undefined
  } catch {
    return undefined
  }
}

const isPlainTcp = (addr: string) => {
  const names = multiaddr(addr)
    .getComponents()
    .map((c) => c.name)
  return names.length === 2 && names[1] === 'tcp'
}

/** The listen addresses with the saved port in the first plain TCP one on port 0; undefined when nothing changes. */
export function withSavedPort(listen: readonly string[], port: number | undefined): string[] | undefined {
  if (port === undefined) return undefined
  const i = listen.findIndex((a) => isPlainTcp(a) && multiaddr(a).getComponents()[1].value === '0')
  if (i < 0) return undefined
  const out = [...listen]
  out[i] = out[i].replace(/\/tcp\/0$/, `/tcp/${port}`)
  return out
}

/** The port of the first plain TCP address the node listens on. */
export function listeningPort(addrs: readonly string[]): number | undefined {
  for (const a of addrs) {
    const parts = multiaddr(a).getComponents()
    if (parts.length >= 2 && parts[1].name === 'tcp' && !parts.slice(2).some((p) => p.name === 'ws' || p.name === 'wss')) return Number(parts[1].value)
  }
  return undefined
}

/** Keeps the port for the next start (mode 0600, beside the account's other files). */
export function savePort(file: string | undefined, port: number | undefined, durability: Durability = 'normal'): void {
  if (!file || port === undefined || port === savedPort(file)) return
  const body: PortFile = { version: 1, tcp: port }
  writeFileAtomic(file, `${JSON.stringify(body)}\n`, 0o600, durability)
}
