import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Env } from '../../sync/core/env.ts'
import { memoryLogger } from '../../sync/core/log.ts'
import { PushOutbox, type LinkReply, type PushNodeLink } from '../../sync/modules/push/outbox.ts'
import { defineModule } from '../../sync/space/module.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { daemonLoggers } from '../../node/log/pino-logger.ts'
import { FsBlockStore } from '../../node/storage/fs-block-store.ts'
import { deps, keyFor } from '../helpers.ts'

/** An env whose timers fire only when the test says so. */
function manualEnv(): Env & { fire(): number } {
  let timers: Array<() => void> = []
  return {
    now: () => 0,
    randomBytes: (n) => new Uint8Array(n),
    setTimer: (_ms, fn) => {
      timers.push(fn)
      return () => void (timers = timers.filter((f) => f !== fn))
    },
    fire() {
      const due = timers
      timers = []
      for (const f of due) f()
      return due.length
    },
  }
}

const turn = () => new Promise((r) => setTimeout(r, 5))

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('background failures are logged, not swallowed', () => {
  it('a push the node never takes: each failed attempt at debug, the give-up at warn', async () => {
    const env = manualEnv()
    const log = memoryLogger('push/outbox')
    const down = async (): Promise<LinkReply> => Promise.reject(new Error('node down'))
    const link: PushNodeLink = { send: down, subscribe: down, unregister: down }
    const ob = new PushOutbox(env, () => link, log)
    ob.enqueue((l) => l.send({ pushKey: keyFor(9), topics: ['chats'], keyId: 'k', payload: new Uint8Array(1), silent: false, ts: 0 }))
    for (let i = 0; i < 10; i++) {
      await turn()
      env.fire()
    }
    await turn()
    expect(ob.stats.failed).toBe(1)
    const debug = log.lines.filter((l) => l.level === 'debug')
    expect(debug).toHaveLength(6)
    expect(debug[0]).toEqual({ level: 'debug', scope: 'push/outbox', msg: 'sending to the push node failed', attempt: 1, err: 'Error: node down' })
    expect(log.lines.filter((l) => l.level === 'warn')).toEqual([{ level: 'warn', scope: 'push/outbox', msg: 'a push was given up', attempts: 6, reason: 'Error: node down' }])
  })

  it("a module's failing commit hook is logged at error by the space's logger, with the space", async () => {
    const log = memoryLogger('account/space')
    const failing = defineModule({
      name: 'failing-hook',
      onCommit: () => {
        throw new Error('hook broke')
      },
    })
    const engine = await SpaceEngine.create(await deps(3), keyFor(1), { modules: [failing], log })
    await engine.createObject()
    expect(log.lines).toContainEqual({ level: 'error', scope: 'account/space', msg: 'module commit hook failed', spaceId: engine.spaceId, err: 'Error: hook broke' })
  })

  it('--log-level decides what reaches the stream: an unreadable blocks folder is a debug line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-logging-'))
    dirs.push(dir)
    // The blocks root is a file: reading a space's folder fails with ENOTDIR, not ENOENT.
    const root = join(dir, 'blocks')
    writeFileSync(root, 'not a folder')
    const emitted = async (level: 'debug' | 'info') => {
      const lines: string[] = []
      const { log } = daemonLoggers(level, { write: (l: string) => lines.push(l) })
      const store = new FsBlockStore(root, undefined, log.child('blocks'))
      // As before: an unreadable folder lists no blocks.
      expect(await store.list('space-1')).toEqual([])
      return lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    }
    const debug = await emitted('debug')
    expect(debug.length).toBeGreaterThan(0)
    expect(debug[0]).toMatchObject({ level: 20, scope: 'daemon/blocks', msg: 'a blocks folder could not be read' })
    expect(String(debug[0].err)).toMatch(/ENOTDIR/)
    expect(await emitted('info')).toEqual([])
  })
})
