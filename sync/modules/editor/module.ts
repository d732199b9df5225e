import { defineModule, type SvcModule } from '../../space/module.ts'
import { eventsModule } from '../events/module.ts'
import { RECORD_SCHEMA as R } from '../../space/types/index.ts'
import { EDITOR_BLOCKS, EDITOR_KIND, EditorService } from './service.ts'
import { EDITOR_ERROR_CODES } from './errors.ts'
import { CursorPresence } from './cursors.ts'

/**
 * The editor as a module (the worked example of docs/architecture.md "Adding a module"):
 * - one dataset kind, `editor`: the shared `editor_blocks` collection any object may hold, or a
 *   type's own `<typeId>_<key>` declared with `module: 'editor'`; its records are blocks;
 * - no merge pins (every block field merges per path);
 * - one service per space, EditorService (markdown and block routes, serialized per space);
 * - no feed of its own: `{S}/query/subscribe` already follows any dataset, blocks included;
 * - no commit hook;
 * - one account service, CursorPresence (live cursors over the event bus, cursors.ts).
 * Its routes plugin is server/modules/editor.ts.
 */
export interface EditorOptions {
  /** How long a live cursor lasts unrenewed (default CURSOR_LIMITS.timeoutMs; `svc serve` reads SVC_CURSOR_TIMEOUT_MS, tests shorten it). */
  cursorTimeoutMs?: number
}

/** The editor with these settings; `editorModule` is the release's. */
export const makeEditorModule = (o: EditorOptions = {}) =>
  defineModule({
    name: 'editor',
    dependencies: ['events'],
    errorCodes: EDITOR_ERROR_CODES,
    datasets: [
      {
        kind: EDITOR_KIND,
        canonicalKey: 'blocks',
        canonicalCollection: EDITOR_BLOCKS,
        sharedOnly: false,
        search: { scope: 'editor', fields: ['text'] },
        schema: {
          type: 'object',
          properties: {
            id: R.idField(),
            _ver: R.verField,
            type: R.synced({ type: 'string' }),
            style: R.synced({ type: 'string' }),
            text: R.synced({ type: 'string' }),
            nav: R.synced({ type: 'object', properties: { pos: { type: 'string' }, depth: { type: 'integer', minimum: 0 } } }),
          },
          required: ['id', 'type'],
          'x-idRule': 'auto',
        },
      },
    ],
    service: ({ space, types }) => new EditorService(space, types),
    // Live cursors belong to the account (they ride its event bus): cursors.ts.
    // It listens to each space's cursors from the space's opening (not from its first cursor
    // route), so the first cursor another device sets is heard.
    accountService: (account) => {
      const presence = new CursorPresence(account.accountId, account.env, o.cursorTimeoutMs, account.log.child('cursors'))
      const x = account as typeof account & { services?: { find<S, A>(m: SvcModule<S, A>): A | undefined } }
      const bus = () => x.services?.find(eventsModule)
      account.events.on('spacesOpened', ({ spaceIds }) => {
        const b = bus()
        if (!b) return
        presence.bind(b).follow(spaceIds)
      })
      return presence
    },
  })

export const editorModule = makeEditorModule()
