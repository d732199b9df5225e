import { join } from 'node:path'
import { getHeapStatistics } from 'node:v8'
import type { PushConfig } from '../push/config.ts'
import { SvcError } from '../../sync/core/errors.ts'
import { systemEnv, type Env } from '../../sync/core/env.ts'
import { nodeCryptoProvider } from '../crypto/node-provider.ts'
import { identityOf } from '../../sync/crypto/keys.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { DEFAULT_MEMORY_BUDGET_BYTES, type MemoryBudgetOptions } from '../../sync/space/residency.ts'
import type { AnyModule } from '../../sync/space/module.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { SqliteStorageAdapter } from '../storage/sqlite.ts'
import { FsBlockStore } from '../storage/fs-block-store.ts'
import { KvBlockStore } from '../../sync/storage/block-store.ts'
import type { BootedAccount, AccountHost, AccountHostOptions } from './account-host.ts'
import type { P2PService } from './p2p-service.ts'
import { ProcessRegistry } from './processes.ts'
import type { SyncStatusService } from './sync-status.ts'
import type { SchedulerOptions } from '../../sync/protocol/sync-scheduler.ts'
import type { AgentsHost, AgentsOptions } from '../agents/host.ts'
import { silentLogger, type Logger } from '../../sync/core/log.ts'
import { startServices, stopServices, type AnyDaemonService, type BaseComponents, type DaemonComponents } from './service.ts'
import { releaseServices } from './services.ts'
import type { HubLinks } from '../hubs/hub-links.ts'

type RunningServices = Awaited<ReturnType<typeof startServices>>

export interface DaemonHostOptions extends AccountHostOptions {
  /** libp2p listen multiaddrs; default all interfaces, random port (`svc serve` reads SVC_P2P_LISTEN). */
  p2pListen?: string[]
  /** Off turns P2P off entirely (tests of the HTTP API alone). */
  p2p?: boolean
  /** Peers to dial by address besides those added over the API (config key `peers`). */
  peers?: readonly string[]
  /** Hubs that keep this account's spaces (config key `hubs`: MULTIADDR or MULTIADDR#TOKEN; docs/hub.md). */
  hubs?: readonly string[]
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
  /** The daemon services to run instead of the release's (node/daemon/services.ts) built from the options above. */
  services?: readonly AnyDaemonService[]
  /** The daemon's logger; each service gets a child scoped to its name (default: silent). */
  log?: Logger
  /** The account's memory budget (`--memory-budget`; sync/space/residency.ts). Default: DEFAULT_MEMORY_BUDGET_BYTES. */
  memoryBudget?: MemoryBudgetOptions
}

/** The share of V8's heap limit the spaces' memory budget may take (the rest: requests, sync, the process itself). */
const HEAP_SHARE = 0.35

/**
 * V8's old-space limit (`--max-old-space-size`), where the spaces' rows live: the heap limit
 * less the young generation, three semi-spaces (`--max-semi-space-size`, 16 MB by default on
 * 64-bit; `npm start` and `svc serve`'s launcher ask for 64).
 */
export function oldSpaceLimit(): number {
  // The command line's flags only: flags given in NODE_OPTIONS are not seen here (the
  // environment is read by the CLI entry alone), so a semi-space set there counts as 16 MB.
  const semi = process.execArgv.map((f) => /^--max-semi-space-size=(\d+)$/.exec(f)?.[1]).findLast((v) => v !== undefined)
  const young = 3 * (semi === undefined ? 16 : Number(semi)) * 1024 * 1024
  return getHeapStatistics().heap_size_limit - young
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
  private current?: { account: AccountEngine; storage: SqliteStorageAdapter; booted: BootedAccount; services: RunningServices; components: DaemonComponents }
  readonly processes: ProcessRegistry
  private readonly log: Logger

  constructor(
    readonly options: DaemonHostOptions,
    private readonly env: Env = systemEnv,
  ) {
    this.log = options.log ?? silentLogger
    this.processes = new ProcessRegistry(Date.now, this.log.child('processes'))
  }

  /** The daemon services this host runs for a booted account: the options' list, else the release's built from the options. */
  private services(): AnyDaemonService[] {
    const o = this.options
    if (o.services) return [...o.services]
    const p2p = o.p2p === false ? false : { mdns: !o.noMdns, listen: o.p2pListen, peers: o.peers, scheduler: o.scheduler, redial: o.redial, joinRetry: o.joinRetry }
    return releaseServices({ p2p, push: o.push, agents: o.agents, hubs: o.hubs })
  }

  async onBoot(booted: BootedAccount): Promise<void> {
    const storage = new SqliteStorageAdapter(join(booted.dir, ENGINE_DB_FILE), { synchronous: this.options.durability ?? 'normal' })
    let account: AccountEngine | undefined
    try {
      const crypto = nodeCryptoProvider({ verify: 'threadpool' })
      // Blocks are files beside the database; blocks an older daemon kept in it stay readable.
      const blocks = new FsBlockStore(join(booted.dir, BLOCKS_DIR), new KvBlockStore(storage), this.log.child('blocks'))
      account = await AccountEngine.open({
        storage,
        blocks,
        crypto,
        env: this.env,
        accountKey: booted.keys.account,
        modules: this.options.modules ?? DEFAULT_MODULES,
        spacesInBackground: true,
        memoryBudget: this.memoryBudget(),
        log: this.log.child('account'),
        ...(this.options.onSpaceOpened ? { onSpaceOpened: this.options.onSpaceOpened } : {}),
      })
      await account.devices.register(identityOf(booted.keys.device.publicKey))
      const base: BaseComponents = {
        env: this.env,
        log: this.log,
        crypto,
        account,
        keys: booted.keys,
        dir: booted.dir,
        durability: this.options.durability ?? 'normal',
        processes: this.processes,
      }
      const services = await startServices(this.services(), base)
      // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- each service's provides is typed by its own declaration; the merged object is the union startServices checked in order
      const components: DaemonComponents = Object.assign({ ...base }, ...services.map((s) => s.running.provides ?? {}))
      this.current = { account, storage, booted, services, components }
    } catch (err) {
      await account?.close()
      await storage.close()
      throw err
    }
  }

  /**
   * The account's memory budget: the configured one, never above HEAP_SHARE of V8's heap limit
   * (`--max-old-space-size`), so a daemon given a small heap closes spaces rather than crash.
   */
  private memoryBudget(): MemoryBudgetOptions {
    const asked = this.options.memoryBudget ?? { bytes: DEFAULT_MEMORY_BUDGET_BYTES }
    const cap = Math.floor(oldSpaceLimit() * HEAP_SHARE)
    if (asked.bytes <= cap) return asked
    this.log.info('the memory budget is capped to a share of the heap limit', { askedBytes: asked.bytes, bytes: cap })
    return { ...asked, bytes: cap }
  }

  async onTeardown(): Promise<void> {
    const c = this.current
    this.current = undefined
    if (!c) return
    await stopServices(c.services, this.log)
    await c.account.close()
    await c.storage.close()
  }

  /** Sync status rollups (spaces and objects). */
  syncStatus(): SyncStatusService {
    const status = this.current?.components.syncStatus
    if (!status) throw new SvcError('auth.required', 'no account is booted')
    return status
  }

  /** The booted account's database (its connection settings are what `--durability` asked for). */
  storage(): SqliteStorageAdapter | undefined {
    return this.current?.storage
  }

  /** The booted account's agents, when the daemon runs them. */
  agents(): AgentsHost | undefined {
    return this.current?.components.agents
  }

  /** The P2P side, when it runs. */
  p2p(): P2PService | undefined {
    return this.current?.components.p2p
  }

  /** This account's hubs (the hub link), while P2P runs. */
  hubs(): HubLinks | undefined {
    return this.current?.components.hubs
  }

  /** `{S}/sync`: a round with every connected peer; resolves when all are done. */
  async syncNow(spaceId: string): Promise<void> {
    await this.current?.components.p2p?.syncNow(spaceId)
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
