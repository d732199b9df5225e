/**
 * Hubs in a run (docs/simulation.md, "Hubs"): how many, their accounts, and the topology that
 * makes them matter: direct links between honest peers cut for most of the safety phase (each
 * pair up only in a few short windows, or never), and long stretches in which a peer is offline
 * altogether, hubs included. Drawn from a stream of its own (stream 8), and only when hubs are
 * asked for: a run without them draws and traces exactly what it did before they existed.
 */
import { Prng } from './prng.ts'

/** Hub accounts start here: above every honest account and every adversary's (200 + k, k < 50). */
export const HUB_ACCOUNT_BASE = 250
/** accountKey fills a byte with account + 1: accounts 250..254 are the last ones free. */
export const MAX_HUBS = 4

/** A span of virtual time in the safety phase, [from, to) in ms. */
export type Span = [number, number]

export interface HubPlan {
  /** Account of each hub `h<k>`. */
  accounts: number[]
  /**
   * Per pair of honest peers (by index, a < b): when their direct link is up during the safety
   * phase. Empty: never, the liveness phase included; such a pair shares data only through a
   * hub (or through other peers, in their windows).
   */
  links: Array<{ a: number; b: number; windows: Span[] }>
  /** Honest peers whose every direct link is `never`: all they get comes through hubs. */
  hubOnly: number[]
  /** Per honest peer: stretches in which it is cut from everyone, hubs included. */
  offline: Span[][]
}

/**
 * Draws the plan for `peers` honest peers and a safety phase of `safetyMs`. A quarter of the
 * peers (never the owner) talk only through hubs; of the other pairs two in five never link,
 * the rest get one or two windows of 0.3..1.5 s. Three peers in five go offline once, for a
 * quarter to three fifths of the safety phase.
 */
export function drawHubPlan(seed: number, hubs: number, peers: number, safetyMs: number): HubPlan {
  const r = new Prng(seed, 8)
  const accounts = Array.from({ length: hubs }, (_, k) => HUB_ACCOUNT_BASE + k)
  const hubOnly: number[] = []
  for (let i = 1; i < peers; i++) if (r.chance(0.25)) hubOnly.push(i)
  const alone = new Set(hubOnly)
  const links: HubPlan['links'] = []
  for (let a = 0; a < peers; a++) {
    for (let b = a + 1; b < peers; b++) {
      const windows: Span[] = []
      if (!alone.has(a) && !alone.has(b) && !r.chance(0.4)) {
        for (let w = r.range(1, 2); w > 0; w--) {
          const from = r.int(safetyMs)
          windows.push([from, Math.min(safetyMs, from + r.range(300, 1500))])
        }
      }
      links.push({ a, b, windows })
    }
  }
  const offline = Array.from({ length: peers }, (): Span[] => {
    if (!r.chance(0.6)) return []
    const len = Math.floor(safetyMs * (0.25 + r.float() * 0.35))
    const from = r.int(safetyMs - len)
    return [[from, from + len]]
  })
  return { accounts, links, hubOnly, offline }
}
