import { SvcError } from '../core/errors.ts'
import type { Env } from '../core/env.ts'
import type { JsonObject } from '../crdt/ops.ts'
import type { SpaceEngine } from './space-engine.ts'
import { instant, recordDoc, type Doc } from './rows.ts'
import { TECH_DS } from './schema.ts'

/**
 * The account's devices, as records of the tech space's `devices` dataset (one per device
 * peer id), so every device of the account sees the others. A pruned device keeps its record
 * with `prunedAt` (first-write-wins, so a prune is never undone by a concurrent update).
 */
export class Devices {
  constructor(
    private readonly tech: SpaceEngine,
    private readonly techObjectId: string,
    private readonly env: Env,
  ) {}

  /** Records this device at boot (name defaults to a short form of its id); refreshes lastSeen. */
  async register(deviceId: string, name?: string): Promise<void> {
    const cur = await this.tech.replica.getRecord(this.techObjectId, TECH_DS.devices, deviceId)
    const now = instant(this.env.now())
    if (!cur || cur.value === undefined) {
      await this.tech.write(this.techObjectId, [
        { op: 'set', ds: TECH_DS.devices, id: deviceId, path: '', value: { deviceId, name: name ?? `device ${deviceId.slice(-6)}`, createdAt: now, lastSeen: now } },
      ])
    } else {
      await this.tech.write(this.techObjectId, [{ op: 'set', ds: TECH_DS.devices, id: deviceId, path: 'lastSeen', value: now }])
    }
  }

  async docs(): Promise<Doc[]> {
    const recs = await this.tech.replica.listRecords(this.techObjectId, TECH_DS.devices)
    return recs
      .filter((r) => !r.deleted && r.value !== undefined)
      .map((r) => {
        const d = recordDoc(r)
        d.pruned = !!(r.value as JsonObject).prunedAt
        return d
      })
  }

  async get(deviceId: string): Promise<Doc> {
    const d = (await this.docs()).find((x) => x.id === deviceId)
    if (!d) throw new SvcError('device.not_found', 'no such device', { deviceId })
    return d
  }

  async rename(deviceId: string, name: string): Promise<void> {
    const d = await this.get(deviceId)
    if (d.pruned) throw new SvcError('device.pruned', 'this device was removed from the account', { deviceId })
    await this.tech.write(this.techObjectId, [{ op: 'set', ds: TECH_DS.devices, id: deviceId, path: 'name', value: name }])
  }

  /** Removes another device from the account's device list (not this one). */
  async prune(deviceId: string, self: string): Promise<void> {
    if (deviceId === self) throw new SvcError('device.self_delete', 'a device cannot remove itself', { deviceId })
    const d = await this.get(deviceId)
    if (d.pruned) throw new SvcError('device.pruned', 'this device was already removed', { deviceId })
    await this.tech.write(this.techObjectId, [{ op: 'set', ds: TECH_DS.devices, id: deviceId, path: 'prunedAt', value: instant(this.env.now()) }])
  }
}
