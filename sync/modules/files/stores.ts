import type { AccountModuleContext } from '../../space/module.ts'

/** The stores the module seam hands files (a module reaches storage only through the seam). */
export type BlockStore = AccountModuleContext['blocks']
export type Storage = AccountModuleContext['storage']
