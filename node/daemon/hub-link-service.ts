import { join } from 'node:path'
import { HubBook } from '../hubs/hub-book.ts'
import { HubLinks } from '../hubs/hub-links.ts'
import { HEAD_SYNC } from '../p2p/protocols/protocol.ts'
import { realTimer } from './p2p-service.ts'
import type { BaseComponents, DaemonService, ProvidedComponents } from './service.ts'

/** Where the hubs added over the API are kept in the account directory (mode 0600: admission tokens). */
export const HUBS_FILE = 'hubs.json'

/**
 * The link to this account's hubs (docs/hub.md "Using a hub"): keeps them connected, makes them
 * custodians of our spaces for head sync and the block exchange, registers every space we hold.
 * It provides `hubs` for the routes (`/v1/hubs`) and sync status.
 */
export const hubLinkService = (init: {
  hubs: readonly string[]
  redial?: { baseMs?: number; maxMs?: number }
}): DaemonService<Pick<BaseComponents, 'account' | 'env' | 'log' | 'dir' | 'durability'> & Pick<ProvidedComponents, 'p2p'> & Partial<Pick<ProvidedComponents, 'syncStatus'>>> => ({
  name: 'hub-link',
  needs: [HEAD_SYNC],
  after: ['sync-status'],
  async start(c) {
    const book = new HubBook(join(c.dir, HUBS_FILE), init.hubs, () => c.env.now(), c.durability, c.log)
    const account = c.account
    const links = new HubLinks({
      node: c.p2p.node,
      session: c.p2p.session,
      scheduler: () => c.p2p.scheduler,
      custodians: c.p2p.custodians,
      spaces: {
        spaceIds: () => account.openSpaces().map((s) => s.spaceId),
        onSpacesOpened: (fn) => account.events.on('spacesOpened', ({ spaceIds }) => fn(spaceIds)),
      },
      book,
      timer: realTimer,
      now: () => c.env.now(),
      log: c.log,
      redial: init.redial,
    })
    c.syncStatus?.attachHubs((spaceId) => links.spaceStates(spaceId))
    return {
      provides: { hubs: links },
      stop: () => {
        c.syncStatus?.attachHubs(undefined)
        links.stop()
      },
    }
  },
})
