import { blocksProtocol } from './blocks.ts'
import { eventsProtocol } from './events.ts'
import { pushProtocol } from './push.ts'
import type { P2pProtocol } from './protocol.ts'

/**
 * The daemon's P2P protocols beside head sync, started in this order when the node starts.
 * Adding one adds a line here and nowhere else in node/ (docs/architecture.md "Adding a module").
 */
export const DEFAULT_P2P_PROTOCOLS: readonly P2pProtocol[] = [eventsProtocol, blocksProtocol, pushProtocol]
