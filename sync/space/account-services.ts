import { SvcError } from '../core/errors.ts'
import { closeServices } from './close-services.ts'
import type { AccountModuleContext, ModuleSet, SvcModule } from './module.ts'

/**
 * The account-level services of the modules (`accountService`), built once when the account
 * engine opens, in module order, and reached as `account.services.of(module)`: the account
 * counterpart of a space's SpaceServices. Wiring is declared on the module, so nothing finds
 * an account's service through a hidden table keyed by the account.
 */
export class AccountServices {
  /** By module name (unique in the set), so a server module spread from a module finds the same service. */
  private readonly byModule = new Map<string, unknown>()
  private readonly installed: ReadonlySet<string>
  private closed = false

  constructor(
    private readonly ctx: AccountModuleContext,
    modules: ModuleSet,
  ) {
    this.installed = new Set(modules.list.map((m) => m.name))
    for (const m of modules.list) {
      const missing = (m.dependencies ?? []).filter((d) => !this.installed.has(d))
      if (missing.length) throw new SvcError('internal', `module ${m.name} needs module ${missing.join(', ')}, which the account's module list leaves out`)
    }
    for (const m of modules.list) if (m.accountService) this.byModule.set(m.name, m.accountService(ctx))
  }

  /** The account service a module built; typed by the module value itself. */
  of<S, A>(module: SvcModule<S, A>): A {
    if (!this.installed.has(module.name)) throw new SvcError('internal', `module ${module.name} is not installed`)
    if (!this.byModule.has(module.name)) throw new SvcError('internal', `module ${module.name} has no account service`)
    return this.byModule.get(module.name) as A
  }

  /** The account service of a module, or undefined when the module is not installed or builds none (a host wiring an optional module). */
  find<S, A>(module: SvcModule<S, A>): A | undefined {
    return this.byModule.get(module.name) as A | undefined
  }

  /** Closes every service that has a `close`, in reverse module order (a later module may use an earlier one's). */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await closeServices(this.byModule.values(), 'account', this.ctx.log)
  }
}
