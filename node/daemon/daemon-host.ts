import { join } from 'node:path'
import type { PushConfig } from '../push/config.ts'
import { SvcError } from '../../sync/core/errors.ts'
import { systemEnv, type Env } from '../../sync/core/env.ts'
import { nodeCryptoProvider } from '../crypto/node-provider.ts'
import { identityOf } from '../../sync/crypto/keys.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import type { AnyModule } from '../../sync/space/module.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { SqliteStorageAdapter } from '../storage/sqlite.ts'
import { FsBlockStore } from '../storage/fs-block-store.ts'
import { KvBlockStore } from '../../sync/storage/block-store.ts'
import type { BootedAccount, AccountHost, AccountHostOptions } from './account-host.ts'
import { P2PService } from './p2p-service.ts'
import { P2P } from '../../sync/p2p/constants.ts'
import { ProcessRegistry } from './processes.ts'
import { SyncStatusService } from './sync-status.ts'
import type { SchedulerOptions } from '../../sync/protocol/sync-scheduler.ts'
import { AgentsHost, type AgentsOptions } from '../agents/host.ts'
import { linkedAccountDevices } from '../agents/live-devices.ts'

export interface DaemonHostOptions extends AccountHostOptions {
  /** libp2p listen multiaddrs; default all interfaces, random port (`svc serve` reads SVC_P2P_LISTEN). */
  p2pListen?: string[]
  /** Off turns P2P off entirely (tests of the HTTP API alone). */
  p2p?: boolean
  /** Peers to dial by address besides those added over the API (config key `peers`). */
  peers?: readonly string[]
  /** The push node to link the push module to (config key `push`, docs/push.md). */
  push?: PushConfig
  /** Redial delays of added peers (tests shorten them). */
  redial?: { baseMs?: number; maxMs?: number }
  /** Retry delays of this account's joins over the wire (tests shorten them). */
  joinRetry?: { baseMs?: number; maxMs?: number }
  scheduler?: SchedulerOptions
  /** The modules the account runs (default: the release's); the app is handed the same list. */
  modules?: readonly AnyModule[]
  /** The agent scheduler and election (node/agents); absent: no agent runs on this daemon. */
  agents?: AgentsOptions
  /** Progress while the account's spaces open at boot (`svc serve` logs it). */
  onSpaceOpened?: (opened: number, total: number) => void
}

/** Where the engine keeps an account's data inside its directory. */
export const ENGINE_DB_FILE = 'svc.db'
/** Files' blocks, one file each (node/storage/fs-block-store.ts). */
export const BLOCKS_DIR = 'blocks'

/**
 * The daemon's engine: one AccountEngine over SQLite in the account directory, booted and torn
 * down by the account lifecycle. Routes reach it through `account()`.
 */
export class DaemonHost implements AccountHost {
  private current?: { account: AccountEngine; storage: SqliteStorageAdapter; booted: BootedAccount; p2p?: P2PService; status: SyncStatusService; stopProcs: () => void; agents?: AgentsHost }
  readonly processes = new ProcessRegistry()

  constructor(readonly options: DaemonHostOptions, private readonly env: Env = systemEnv) {}

  async onBoot(booted: BootedAccount): Promise<void> {
    const storage = new SqliteStorageAdapter(join(booted.dir, ENGINE_DB_FILE), { synchronous: this.options.durability ?? 'normal' })
    let account: AccountEngine | undefined
    try {
      const crypto = nodeCryptoProvider({ verify: 'threadpool' })
      // Blocks are files beside the database; blocks an older daemon kept in it stay readable.
      const blocks = new FsBlockStore(join(booted.dir, BLOCKS_DIR), new KvBlockStore(storage))
      account = await AccountEngine.open({ storage, blocks, crypto, env: this.env, accountKey: booted.keys.account, modules: this.options.modules ?? DEFAULT_MODULES, spacesInBackground: true, ...(this.options.onSpaceOpened ? { onSpaceOpened: this.options.onSpaceOpened } : {}) })
      await account.devices.register(identityOf(booted.keys.device.publicKey))
      const listen = this.options.p2pListen
      const p2p =
        this.options.p2p === false
          ? undefined
          : await P2PService.start({
              account, keys: booted.keys, crypto, env: this.env, mdns: !this.options.noMdns, listen, scheduler: this.options.scheduler,
              peersFile: join(booted.dir, P2P.peersFile), configPeers: this.options.peers, redial: this.options.redial, durability: this.options.durability,
              joinRetry: this.options.joinRetry, push: this.options.push,
            })
      if (p2p) account.attachNetwork(p2p.sharing)
      const status = new SyncStatusService(account, p2p)
      // A space's sync rounds are one process record while any runs (listed past 3 s).
      const ends = new Map<string, () => void>()
      const stopProcs = p2p
        ? p2p.scheduler.onRound((e) => {
            const id = `sync.${e.spaceId}`
            if (e.phase === 'start') {
              const end = this.processes.start(id, 'sync')
              ends.set(`${e.peer}\u0000${e.spaceId}`, end)
            } else {
              const key = `${e.peer}\u0000${e.spaceId}`
              ends.get(key)?.()
              ends.delete(key)
            }
            account!.events.emit('process', { id, kind: 'sync', phase: e.phase })
          })
        : () => undefined
      const agents = this.options.agents ? new AgentsHost(account, this.env, identityOf(booted.keys.device.publicKey), { ...this.options.agents, liveDevices: p2p && linkedAccountDevices(p2p, account.accountId) }) : undefined
      await agents?.start()
      this.current = { account, storage, booted, p2p, status, stopProcs, agents }
    } catch (err) {
      await account?.close()
      await storage.close()
      throw err
    }
  }

  async onTeardown(): Promise<void> {
    const c = this.current
    this.current = undefined
    if (!c) return
    await c.agents?.stop()
    c.stopProcs()
    c.status.stop()
    await c.p2p?.stop()
    await c.account.close()
    await c.storage.close()
  }

  /** Sync status rollups (spaces and objects). */
  syncStatus(): SyncStatusService {
    if (!this.current) throw new SvcError('auth.required', 'no account is booted')
    return this.current.status
  }

  /** The booted account's database (its connection settings are what `--durability` asked for). */
  storage(): SqliteStorageAdapter | undefined {
    return this.current?.storage
  }

  /** The booted account's agents, when the daemon runs them. */
  agents(): AgentsHost | undefined {
    return this.current?.agents
  }

  /** The P2P side, when it runs. */
  p2p(): P2PService | undefined {
    return this.current?.p2p
  }

  /** `{S}/sync`: a round with every connected peer; resolves when all are done. */
  async syncNow(spaceId: string): Promise<void> {
    await this.current?.p2p?.syncNow(spaceId)
    // What the rounds brought is readable when this resolves (object index, hooks, feeds).
    await this.current?.account.held(spaceId)?.settled()
  }

  /** The booted account's engine; routes run only when one is booted (the gate sees to it). */
  account(): AccountEngine {
    if (!this.current) throw new SvcError('auth.required', 'no account is booted')
    return this.current.account
  }

  /** The booted account's keys (device key = peer id). */
  booted(): BootedAccount | undefined {
    return this.current?.booted
  }
}

export const daemonEngineFactory = (opts: DaemonHostOptions) => new DaemonHost(opts)
