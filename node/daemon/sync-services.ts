import type { BaseComponents, DaemonService, ProvidedComponents } from './service.ts'
import { HEAD_SYNC } from '../p2p/protocols/protocol.ts'
import { SyncStatusService } from './sync-status.ts'

/** Sync status rollups of spaces and objects (`GET /v1/sync/status`), from head sync's rounds when it runs. */
export const syncStatusService = (): DaemonService<Pick<BaseComponents, 'account'> & Partial<Pick<ProvidedComponents, 'p2p'>>> => ({
  name: 'sync-status',
  after: [HEAD_SYNC],
  async start(c) {
    const status = new SyncStatusService(c.account, c.p2p)
    return { provides: { syncStatus: status }, stop: () => status.stop() }
  },
})

/** A space's sync rounds as one process record while any runs (`GET /v1/processes`, listed past 3 s). */
export const syncProcessesService = (): DaemonService<Pick<BaseComponents, 'account' | 'processes'> & Pick<ProvidedComponents, 'p2p'>> => ({
  name: 'sync-processes',
  needs: [HEAD_SYNC],
  async start(c) {
    const ends = new Map<string, () => void>()
    const stop = c.p2p.scheduler.onRound((e) => {
      const id = `sync.${e.spaceId}`
      const key = `${e.peer}\u0000${e.spaceId}`
      if (e.phase === 'start') {
        ends.set(key, c.processes.start(id, 'sync'))
      } else {
        ends.get(key)?.()
        ends.delete(key)
      }
      c.account.events.emit('process', { id, kind: 'sync', phase: e.phase })
    })
    return { stop }
  },
})
