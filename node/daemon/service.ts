import { SvcError } from '../../sync/core/errors.ts'
import type { Env } from '../../sync/core/env.ts'
import type { Logger } from '../../sync/core/log.ts'
import type { CryptoProvider } from '../../sync/crypto/provider.ts'
import type { WalletKeys } from '../../sync/crypto/wallet.ts'
import type { AccountEngine } from '../../sync/space/account-engine.ts'
import type { Durability } from '../account/files.ts'
import type { ProcessRegistry } from './processes.ts'

/**
 * The daemon-service seam, the daemon's counterpart of the module seam (sync/space/module.ts):
 * everything the daemon runs beside the account engine for a booted account (head sync and the
 * P2P protocols beside it, the push link, agents, sync status, the process records of rounds) is
 * one value of this shape, and the daemon host is handed a list of them
 * (node/daemon/services.ts builds the release's list from the configuration). Modelled on
 * js-libp2p's services: `ping(init)` returns `(components) => service`; here a factory takes its
 * configuration and returns a `DaemonService`, whose `start` receives only the components it
 * declares (its type parameter) and returns what it runs.
 *
 * - `needs` names the services that must run first (head sync for every P2P protocol); the list
 *   is checked when the account boots, so a missing one fails the boot with its name rather than
 *   at run time, and services start in an order that satisfies every `needs`.
 * - what a started service `provides` joins the components of the services after it (head sync
 *   provides `p2p`, the libp2p node and the peer trust the protocols share);
 * - services stop in the reverse order of their start, when the account is torn down.
 */
export interface DaemonService<Needs = DaemonComponents> {
  readonly name: string
  readonly needs?: readonly string[]
  /** Services it starts after when they are in the list, and runs without otherwise (agents use head sync's links when there are any). */
  readonly after?: readonly string[]
  /** Answers undefined when it has nothing to run for this account (its module is not in the list). */
  start(components: Needs): Promise<RunningService | undefined>
}

/** A service that runs: what it adds to the components, and how it stops. */
export interface RunningService {
  readonly provides?: Partial<ProvidedComponents>
  stop(): void | Promise<void>
}

/** Components that exist once the account has opened, before any service starts. */
export interface BaseComponents {
  env: Env
  /** Scoped to the service (`daemon/<name>`). */
  log: Logger
  crypto: CryptoProvider
  account: AccountEngine
  /** Only head sync takes these (the device key is its libp2p identity); every other service receives the key it uses through head sync's components. */
  keys: WalletKeys
  /** The account's directory, where a service keeps its files. */
  dir: string
  durability: Durability
  processes: ProcessRegistry
}

/** Components services add for the ones after them (declared here so each `start` can ask for them by type). */
export interface ProvidedComponents {
  p2p: import('./p2p-service.ts').P2PService
  node: import('../p2p/libp2p-node.ts').SvcLibp2p
  peers: import('../p2p/protocols/protocol.ts').PeerTrust
  agents: import('../agents/host.ts').AgentsHost
  syncStatus: import('./sync-status.ts').SyncStatusService
  hubs: import('../hubs/hub-links.ts').HubLinks
}

export type DaemonComponents = BaseComponents & Partial<ProvidedComponents>

/** Every component, as a service that names what it needs sees them. */
export type AllComponents = BaseComponents & ProvidedComponents

/**
 * A service of any component needs, as lists hold them: `start` is a method, so a service asking
 * for any part of the components fits.
 */
export type AnyDaemonService = DaemonService<AllComponents>

/**
 * The list in an order where every service comes after those it needs; throws when a name
 * repeats or a needed service is missing, before anything starts.
 */
export function startOrder(services: readonly AnyDaemonService[]): AnyDaemonService[] {
  const byName = new Map<string, AnyDaemonService>()
  for (const s of services) {
    if (byName.has(s.name)) throw new SvcError('internal', `daemon service ${s.name} is listed twice`)
    byName.set(s.name, s)
  }
  const ordered: AnyDaemonService[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (s: AnyDaemonService, path: string[]) => {
    if (state.get(s.name) === 'done') return
    if (state.get(s.name) === 'visiting') throw new SvcError('internal', `daemon services need each other: ${[...path, s.name].join(' -> ')}`)
    state.set(s.name, 'visiting')
    for (const need of s.needs ?? []) {
      const dep = byName.get(need)
      if (!dep) throw new SvcError('internal', `daemon service ${s.name} needs ${need}, which is not in the daemon's service list`)
      visit(dep, [...path, s.name])
    }
    for (const name of s.after ?? []) {
      const dep = byName.get(name)
      if (dep) visit(dep, [...path, s.name])
    }
    state.set(s.name, 'done')
    ordered.push(s)
  }
  for (const s of services) visit(s, [])
  return ordered
}

/**
 * Starts the services in order, each with the base components and what the ones before it
 * provided; on a failure stops those already started and rethrows. Returns them running, in
 * start order.
 */
export async function startServices(services: readonly AnyDaemonService[], base: BaseComponents): Promise<Array<{ name: string; running: RunningService }>> {
  const ordered = startOrder(services)
  const components: DaemonComponents = { ...base }
  const started: Array<{ name: string; running: RunningService }> = []
  try {
    for (const s of ordered) {
      // A provided component exists when its provider is among `needs` (startOrder checked the
      // list); one named in `after` may be absent, and those services type it optional.
      const running = await s.start({ ...(components as AllComponents), log: base.log.child(s.name) })
      if (!running) continue
      Object.assign(components, running.provides)
      started.push({ name: s.name, running })
    }
  } catch (err) {
    await stopServices(started, base.log)
    throw err
  }
  return started
}

/** Stops running services in the reverse order of their start; a failure is logged and the rest still stop. */
export async function stopServices(running: ReadonlyArray<{ name: string; running: RunningService }>, log: Logger): Promise<void> {
  for (const { name, running: r } of [...running].reverse()) {
    try {
      await r.stop()
    } catch (err) {
      log.warn('a daemon service failed to stop', { service: name, err: err instanceof Error ? err.message : String(err) })
    }
  }
}
