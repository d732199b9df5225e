import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { missingNearTips, TreeDiff, type DagView } from '../../sync/protocol/tree-diff.ts'

/**
 * Head sync's walk from the tips (sync/protocol/tree-diff.ts, missingNearTips) finds exactly what
 * the whole walk finds: every change not reachable from the peer's heads and sample, in (lamport,
 * id) order. Random DAGs where each change cites one to three earlier ones, lamport one above its
 * highest parent (what ingest enforces), and random sets of the peer's changes.
 */
interface Node {
  id: string
  lamport: number
  prevIds: string[]
}

function dagFrom(picks: Array<[number, number, number]>): Map<string, Node> {
  const nodes = new Map<string, Node>()
  const list: Node[] = []
  picks.forEach(([a, b, c], i) => {
    const prev = list.length === 0 ? [] : [...new Set([a, b, c].slice(0, 1 + (c % 3)).map((x) => list[x % list.length].id))]
    const lamport = prev.length === 0 ? 1 : Math.max(...prev.map((p) => nodes.get(p)!.lamport)) + 1
    const n = { id: `c${String(i).padStart(4, '0')}${'xyz'[a % 3]}`, lamport, prevIds: prev }
    nodes.set(n.id, n)
    list.push(n)
  })
  return nodes
}

function wholeWalk(nodes: Map<string, Node>, theirs: string[]): string[] {
  const known = new Set<string>()
  const stack = theirs.filter((h) => nodes.has(h))
  while (stack.length) {
    const id = stack.pop()!
    if (known.has(id)) continue
    known.add(id)
    for (const p of nodes.get(id)!.prevIds) if (!known.has(p)) stack.push(p)
  }
  return [...nodes.values()]
    .filter((n) => !known.has(n.id))
    .sort((a, b) => a.lamport - b.lamport || (a.id < b.id ? -1 : 1))
    .map((n) => n.id)
}

const headsOf = (nodes: Map<string, Node>) => {
  const cited = new Set<string>()
  for (const n of nodes.values()) for (const p of n.prevIds) cited.add(p)
  return [...nodes.keys()].filter((id) => !cited.has(id))
}

const view = (nodes: Map<string, Node>): DagView => ({
  size: nodes.size,
  has: (id) => nodes.has(id),
  parents: (id) => nodes.get(id)!.prevIds,
  nodes: () => nodes.values(),
  key: nodes,
  tips: {
    heads: () => headsOf(nodes),
    lamport: (id) => nodes.get(id)!.lamport,
    nodesAfter: function* (k) {
      let i = 0
      for (const n of nodes.values()) if (i++ >= k) yield n
    },
  },
})

describe('head sync from the tips', () => {
  it('finds what the whole walk finds', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(1000), fc.nat(1000), fc.nat(1000)), { minLength: 1, maxLength: 80 }),
        fc.array(fc.nat(1000), { maxLength: 8 }),
        fc.boolean(),
        (picks, theirPicks, withUnknown) => {
          const nodes = dagFrom(picks)
          const ids = [...nodes.keys()]
          const theirs = theirPicks.map((k) => ids[k % ids.length])
          if (withUnknown) theirs.push('not-here')
          const dag = view(nodes)
          expect(missingNearTips(dag, dag.tips!, theirs)).toEqual(wholeWalk(nodes, theirs))
        },
      ),
      { numRuns: 400 },
    )
  })

  it('gives up on a tree whose lamports do not rise from parent to child', () => {
    const nodes = new Map<string, Node>([
      ['a', { id: 'a', lamport: 5, prevIds: [] }],
      ['b', { id: 'b', lamport: 3, prevIds: ['a'] }],
    ])
    const dag = view(nodes)
    expect(missingNearTips(dag, dag.tips!, [])).toBeUndefined()
  })

  it("keeps a growing tree's order as a fresh sort would", () => {
    const diff = new TreeDiff()
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(1000), fc.nat(1000), fc.nat(1000)), { minLength: 2, maxLength: 60 }), fc.nat(58), (picks, cut) => {
        const all = dagFrom(picks)
        const nodes = new Map([...all].slice(0, 1 + (cut % (all.size - 1))))
        const dag = view(nodes)
        const first = diff.ordered(dag)
        expect(first.map((n) => n.id)).toEqual(wholeWalk(nodes, []))
        for (const [id, n] of all) nodes.set(id, n)
        const grown = view(nodes)
        expect(diff.ordered({ ...grown, key: nodes }).map((n) => n.id)).toEqual(wholeWalk(nodes, []))
      }),
      { numRuns: 200 },
    )
  })
})
