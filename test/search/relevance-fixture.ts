/**
 * A relevance fixture: 40 topics, 6 documents each (240), and graded queries. A topic has five
 * words of its own and one synonym no document contains (the test embedder maps the synonym
 * onto the topic's first word, as a real model would place them near each other). Documents
 * mix three topic words with filler words every topic shares, so a query must find its topic
 * among look-alikes. Grades: 2 for a document naming the query word in its name, 1 for another
 * document of the topic, 0 otherwise. Deterministic: no randomness, a fixed mixing rule.
 */
export const TOPICS: Array<{ words: [string, string, string, string, string]; synonym: string }> = [
  { words: ['telescope', 'galaxy', 'nebula', 'orbit', 'comet'], synonym: 'stargazing' },
  { words: ['violin', 'orchestra', 'symphony', 'conductor', 'cello'], synonym: 'fiddle' },
  { words: ['sourdough', 'oven', 'flour', 'yeast', 'crust'], synonym: 'bakery' },
  { words: ['glacier', 'iceberg', 'tundra', 'permafrost', 'fjord'], synonym: 'icefield' },
  { words: ['bicycle', 'pedal', 'gearing', 'saddle', 'spokes'], synonym: 'cycling' },
  { words: ['volcano', 'magma', 'lava', 'caldera', 'eruption'], synonym: 'volcanic' },
  { words: ['chess', 'bishop', 'gambit', 'checkmate', 'opening'], synonym: 'grandmaster' },
  { words: ['honey', 'beehive', 'pollen', 'nectar', 'swarm'], synonym: 'apiary' },
  { words: ['lighthouse', 'harbor', 'beacon', 'coastline', 'tide'], synonym: 'seamark' },
  { words: ['compiler', 'parser', 'bytecode', 'linker', 'optimizer'], synonym: 'toolchain' },
  { words: ['mushroom', 'spores', 'mycelium', 'fungus', 'truffle'], synonym: 'forager' },
  { words: ['kayak', 'paddle', 'rapids', 'canoe', 'river'], synonym: 'whitewater' },
  { words: ['pottery', 'kiln', 'glaze', 'clay', 'wheel'], synonym: 'ceramics' },
  { words: ['satellite', 'antenna', 'uplink', 'transponder', 'footprint'], synonym: 'geostationary' },
  { words: ['vineyard', 'grapes', 'harvest', 'cellar', 'barrel'], synonym: 'winery' },
  { words: ['earthquake', 'fault', 'seismic', 'tremor', 'epicenter'], synonym: 'quake' },
  { words: ['penguin', 'colony', 'antarctic', 'krill', 'rookery'], synonym: 'emperor' },
  { words: ['origami', 'crease', 'fold', 'paper', 'crane'], synonym: 'papercraft' },
  { words: ['marathon', 'runner', 'stride', 'finish', 'pace'], synonym: 'jogging' },
  { words: ['submarine', 'periscope', 'sonar', 'torpedo', 'hull'], synonym: 'uboat' },
  { words: ['tomato', 'greenhouse', 'seedling', 'compost', 'trellis'], synonym: 'gardening' },
  { words: ['guitar', 'chord', 'fretboard', 'amplifier', 'riff'], synonym: 'strumming' },
  { words: ['blizzard', 'snowdrift', 'frost', 'sleet', 'whiteout'], synonym: 'snowstorm' },
  { words: ['pyramid', 'pharaoh', 'tomb', 'hieroglyph', 'sphinx'], synonym: 'egyptology' },
  { words: ['rocket', 'booster', 'launchpad', 'thrust', 'payload'], synonym: 'spaceflight' },
  { words: ['coffee', 'espresso', 'roast', 'barista', 'grinder'], synonym: 'caffeine' },
  { words: ['dinosaur', 'fossil', 'jurassic', 'skeleton', 'excavation'], synonym: 'paleontology' },
  { words: ['sailboat', 'mast', 'rigging', 'keel', 'regatta'], synonym: 'yachting' },
  { words: ['library', 'catalog', 'archive', 'manuscript', 'librarian'], synonym: 'bibliotheca' },
  { words: ['tornado', 'funnel', 'supercell', 'twister', 'storm'], synonym: 'cyclone' },
  { words: ['samurai', 'katana', 'shogun', 'dojo', 'armor'], synonym: 'bushido' },
  { words: ['diamond', 'carat', 'jeweler', 'facet', 'gemstone'], synonym: 'bling' },
  { words: ['railway', 'locomotive', 'timetable', 'platform', 'carriage'], synonym: 'trainspotting' },
  { words: ['reef', 'coral', 'lagoon', 'snorkel', 'atoll'], synonym: 'scuba' },
  { words: ['vaccine', 'antibody', 'immunity', 'booster', 'pathogen'], synonym: 'inoculation' },
  { words: ['castle', 'drawbridge', 'moat', 'battlement', 'keep'], synonym: 'fortress' },
  { words: ['tapestry', 'loom', 'weaving', 'thread', 'shuttle'], synonym: 'textile' },
  { words: ['aquarium', 'goldfish', 'filter', 'gravel', 'tank'], synonym: 'fishkeeping' },
  { words: ['desert', 'dune', 'oasis', 'camel', 'mirage'], synonym: 'sahara' },
  { words: ['glider', 'thermal', 'updraft', 'cockpit', 'wingspan'], synonym: 'soaring' },
]

const FILLER = ['notes', 'guide', 'review', 'summary', 'overview', 'basics', 'advanced', 'history', 'today', 'collection', 'field', 'project', 'report', 'plan', 'story', 'journal']

export interface FixtureDoc {
  id: string
  topic: number
  name: string
  description: string
}

const cap = (w: string) => w[0].toUpperCase() + w.slice(1)

export function fixtureDocs(): FixtureDoc[] {
  const out: FixtureDoc[] = []
  TOPICS.forEach((t, ti) => {
    for (let d = 0; d < 6; d++) {
      const w = (i: number) => t.words[(d + i) % 5]
      const f = (i: number) => FILLER[(ti * 7 + d * 3 + i) % FILLER.length]
      out.push({ id: `t${ti}d${d}`, topic: ti, name: `${cap(w(0))} ${f(0)}`, description: `${cap(f(1))} about ${w(1)} and ${w(2)}, ${f(2)} ${f(3)}.` })
    }
  })
  return out
}

export interface GradedQuery {
  query: string
  /** Whether only the embedder can answer it (the synonym queries). */
  synonym: boolean
  /** Document id -> grade (absent: 0). */
  grades: Map<string, number>
}

export function fixtureQueries(docs: FixtureDoc[]): GradedQuery[] {
  const out: GradedQuery[] = []
  TOPICS.forEach((t, ti) => {
    const mine = docs.filter((d) => d.topic === ti)
    for (const [query, synonym] of [
      [t.words[0], false],
      [`${t.words[3]} ${t.words[4]}`, false],
      [t.synonym, true],
    ] as const) {
      const head = synonym ? t.words[0] : query.split(' ')[0]
      out.push({ query, synonym, grades: new Map(mine.map((d) => [d.id, d.name.toLowerCase().includes(head) ? 2 : 1])) })
    }
  })
  return out
}

/** The synonym table the test embedder gets: each topic's synonym onto its first word. */
export const FIXTURE_SYNONYMS: Record<string, string> = Object.fromEntries(TOPICS.map((t) => [t.synonym, t.words[0]]))

/** Mean reciprocal rank at 10: 1 / rank of the first document with a grade, 0 past 10. */
export function mrrAt10(ranked: string[][], queries: GradedQuery[]): number {
  let sum = 0
  queries.forEach((q, i) => {
    const r = ranked[i].slice(0, 10).findIndex((id) => (q.grades.get(id) ?? 0) > 0)
    if (r >= 0) sum += 1 / (r + 1)
  })
  return sum / queries.length
}

/** Normalized discounted cumulative gain at 10 with the grades above. */
export function ndcgAt10(ranked: string[][], queries: GradedQuery[]): number {
  let sum = 0
  queries.forEach((q, i) => {
    const dcg = ranked[i].slice(0, 10).reduce((s, id, r) => s + (2 ** (q.grades.get(id) ?? 0) - 1) / Math.log2(r + 2), 0)
    const ideal = [...q.grades.values()]
      .sort((a, b) => b - a)
      .slice(0, 10)
      .reduce((s, g, r) => s + (2 ** g - 1) / Math.log2(r + 2), 0)
    sum += ideal > 0 ? dcg / ideal : 0
  })
  return sum / queries.length
}
