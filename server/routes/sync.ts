import { Type } from '@sinclair/typebox'
import { MAX_NAME_LENGTH } from '../../sync/core/limits.ts'
import { forwarder } from '../http/forwarder.ts'
import type { FastifyInstance } from 'fastify'
import type { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { SvcError } from '../../sync/core/errors.ts'
import { identityOf } from '../../sync/crypto/keys.ts'
import { EventStream } from '../schemas/common.ts'
import { ObjectParams } from '../schemas/objects.ts'
import { Id, SpaceParams } from '../schemas/spaces.ts'
import { typed } from '../http/type-provider.ts'
import { liveRoute } from '../http/live-route.ts'
import { parseSubscribeBody } from '../../sync/query/index.ts'
import { devicesFeed } from '../../sync/space/live-feeds.ts'
import { DevicesSubscribeBody } from '../schemas/query.ts'
import { openLive } from './live.ts'

const DeviceParams = Type.Object({ deviceId: Id('device id (its peer id)') })
const DevicePatch = Type.Object({ name: Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH }) }, { additionalProperties: false })

/**
 * Debug, sync status, processes and devices (spec "Debug, sync and processes"; device routes of
 * our design, see docs/api.md). Each route reads one engine service.
 */
export function syncRoutes(engine: DaemonHost) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    app.get('/v1/debug/p2p', { schema: { summary: 'Local-network snapshot: own peer id, listeners, LAN peers and shared spaces' } }, async () => {
      const p2p = engine.p2p()
      if (!p2p) return { peerId: identityOf(engine.booted()!.keys.device.publicKey), listen: [], mdns: false, discovered: [], peers: [] }
      return { ...p2p.snapshot(), mdns: p2p.mdns, discovered: p2p.discovered() }
    })

    app.get('/v1/spaces/:spaceId/debug', { schema: { summary: 'Per-peer head-sync counters since boot', params: SpaceParams } }, async (request) => {
      const { spaceId } = request.params
      engine.account().space(spaceId)
      const stats = engine.p2p()?.scheduler.stats.get(spaceId)
      const peers = [...(stats?.values() ?? [])].map((s) => ({
        peerId: s.peerId,
        lastSyncAt: s.lastSyncAt === null ? null : { $date: new Date(s.lastSyncAt).toISOString() },
        new: s.new,
        changed: s.changed,
        lastErr: s.lastErr,
        rounds: s.rounds,
      }))
      return { spaceId, peers }
    })

    app.get('/v1/spaces/:spaceId/debug/objects/:objectId', { schema: { summary: "Joint snapshot of an object's tree and sync state", params: ObjectParams } }, async (request) => {
      const { spaceId, objectId } = request.params
      const space = engine.account().space(spaceId)
      const meta = space.replica.treeMeta(objectId)
      if (!meta) throw new SvcError('object.not_found', 'object not found', { objectId })
      const idx = await space.replica.treeIndex(objectId)
      const status = engine.syncStatus().object(spaceId, objectId)
      let latest = 0
      for (const r of await space.replica.listRecords(objectId, '')) latest = Math.max(latest, r.versionId)
      return {
        objectId,
        syncState: status.state,
        pending: status.pending ? [objectId] : [],
        lastSyncAt: status.lastSyncAt,
        heads: meta.heads,
        headsCount: meta.heads.length,
        // Concurrent branches still open: heads beyond the first.
        branchCount: Math.max(0, meta.heads.length - 1),
        treeLen: idx.size,
        // Materialized state is persisted per record: load never replays history.
        snapshots: 0,
        latestVersionId: String(latest),
        maxAddSeq: meta.maxLamport,
      }
    })

    app.get('/v1/sync-status', { schema: { summary: 'Sync status of every held space' } }, async () => ({ spaces: engine.syncStatus().all() }))

    app.get('/v1/spaces/:spaceId/sync-status', { schema: { summary: "A space's sync status", params: SpaceParams } }, async (request) =>
      engine.syncStatus().space(request.params.spaceId),
    )

    app.get('/v1/spaces/:spaceId/sync-status/objects/:objectId', { schema: { summary: "An object's sync status", params: ObjectParams } }, async (request) => {
      const { spaceId, objectId } = request.params
      return engine.syncStatus().object(spaceId, objectId)
    })

    app.get(
      '/v1/sync-status/subscribe',
      { schema: { summary: 'Sync status of every space (SSE)', response: { 200: EventStream('ready, status, lagged, closed') } } },
      async (_request, reply) => {
        const status = engine.syncStatus()
        const stream = app.sse.open(reply)
        if (stream.closed) return
        const forward = forwarder(stream, 'status')
        for (const s of status.all()) forward(s)
        stream.onClose(status.watch((spaceId) => forward(status.space(spaceId))))
      },
    )

    app.get(
      '/v1/spaces/:spaceId/sync-status/objects/:objectId/subscribe',
      { schema: { summary: "One object's sync status (SSE)", params: ObjectParams, response: { 200: EventStream('ready, status, lagged, closed') } } },
      async (request, reply) => {
        const { spaceId, objectId } = request.params
        const status = engine.syncStatus()
        let last = JSON.stringify(status.object(spaceId, objectId))
        const stream = app.sse.open(reply)
        if (stream.closed) return
        const forward = forwarder(stream, 'status')
        forward(JSON.parse(last))
        stream.onClose(
          status.watch((changed) => {
            if (changed !== spaceId) return
            let now: string
            try {
              now = JSON.stringify(status.object(spaceId, objectId))
            } catch {
              stream.close('sdk_closed')
              return
            }
            if (now !== last) forward(JSON.parse((last = now)))
          }),
        )
      },
    )

    const notImplemented = async () => {
      throw new SvcError('sdk.not_implemented', 'per-peer sync status is not implemented')
    }
    app.get('/v1/sync-status/peers', { schema: { summary: 'Per-peer sync status (not implemented: 501)' } }, notImplemented)
    app.get('/v1/sync-status/peers/subscribe', { schema: { summary: 'Per-peer sync status stream (not implemented: 501)' } }, notImplemented)

    // Not held back by spaces still loading after a restart: their index loads are listed here.
    app.get('/v1/processes', { config: { whileSpaceLoads: true }, schema: { summary: 'Long-running work (announced after 3 s)' } }, async () => ({
      processes: engine.processes.list(),
    }))

    // Devices of the account (records of the tech space).
    app.get('/v1/devices', { schema: { summary: "The account's devices" } }, async () => ({ devices: await engine.account().devices.docs(), self: selfId(engine) }))
    app.get('/v1/devices/:deviceId', { schema: { summary: 'One device', params: DeviceParams } }, async (request) => engine.account().devices.get(request.params.deviceId))
    app.patch('/v1/devices/:deviceId', { schema: { summary: 'Rename a device', params: DeviceParams, body: DevicePatch } }, async (request, reply) => {
      await engine.account().devices.rename(request.params.deviceId, request.body.name)
      return reply.code(204).send()
    })
    liveRoute(
      root,
      '/v1/devices/query/subscribe',
      {
        config: { reads: true },
        schema: {
          summary: 'Live device records of the account (SSE, windowed frames)',
          body: DevicesSubscribeBody,
          response: { 200: EventStream('ready, snapshot, changes, closed') },
        },
      },
      async (request, reply) => {
        const body = parseSubscribeBody(request.body)
        await openLive(app, reply, body, devicesFeed(engine.account()))
      },
    )
    app.delete('/v1/devices/:deviceId', { schema: { summary: 'Remove another device from the account', params: DeviceParams } }, async (request, reply) => {
      await engine.account().devices.prune(request.params.deviceId, selfId(engine))
      return reply.code(204).send()
    })
  }
}

const selfId = (engine: DaemonHost) => identityOf(engine.booted()!.keys.device.publicKey)
