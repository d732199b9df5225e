import { defineModule } from '../../space/module.ts'
import { LocalFieldsService } from './service.ts'

/**
 * Device-local dataset fields (spec "Modify and upsert bodies", `scope: local`): a dataset
 * declaration marks a field `scope: local`; `POST {S}/modify` with `scope: "local"` writes it to
 * this device's storage, never to a change; the overlay merges it into the record on read
 * (queries, live windows). The service is sync/modules/local-fields/service.ts; docs/types.md
 * "Device-local fields".
 */
export const localFieldsModule = defineModule({
  name: 'local-fields',
  service: (ctx) => new LocalFieldsService(ctx),
  onCommit: (change, service) => service.committed(change),
  overlay: {
    records: (service, objectId, dataset, docs) => service.overlayRecords(objectId, dataset, docs),
  },
  localWrites: (service, body) => service.modify(body),
})
