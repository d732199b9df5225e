import type { Command } from '../io.ts'
import { serveCommand } from '../serve.ts'
import { authCommand } from './auth.ts'
import { healthCommand } from './health.ts'
import { modifyCommand } from './modify.ts'
import { objectsCommand } from './objects.ts'
import { queryCommand } from './query.ts'
import { shutdownCommand } from './shutdown.ts'
import { spacesCommand } from './spaces.ts'
import { subscribeCommand } from './subscribe.ts'
import { peersCommand } from './peers.ts'
import { syncStatusCommand } from './sync-status.ts'
import { oneToOneCommand } from './one-to-one.ts'
import { inviteCommand } from './invite.ts'
import { joinCommand } from './join.ts'
import { membersCommand } from './members.ts'
import { chatCommand } from './chat.ts'
import { eventsCommand } from './events.ts'
import { agentsCommand } from './agents.ts'
import { typesCommand } from './types.ts'
import { propsCommand } from './props.ts'
import { mdCommand } from './md.ts'
import { historyCommand } from './history.ts'
import { bundlesCommand } from './bundles.ts'
import { catalogCommand } from './catalog.ts'
import { aggregateCommand } from './aggregate.ts'
import { searchCommand } from './search.ts'
import { filesCommand } from './files.ts'
import { pushNodeCommand } from './push-node.ts'
import { hubCommand } from './hub.ts'
import { hubsCommand } from './hubs.ts'
import { openCommand } from './open.ts'

/** Every `svc` subcommand; a new one is a file in this folder plus a line here. */
export const COMMANDS: readonly Command[] = [
  serveCommand,
  openCommand,
  healthCommand,
  authCommand,
  shutdownCommand,
  spacesCommand,
  objectsCommand,
  queryCommand,
  modifyCommand,
  subscribeCommand,
  peersCommand,
  syncStatusCommand,
  oneToOneCommand,
  inviteCommand,
  joinCommand,
  membersCommand,
  chatCommand,
  eventsCommand,
  agentsCommand,
  typesCommand,
  propsCommand,
  mdCommand,
  historyCommand,
  bundlesCommand,
  catalogCommand,
  aggregateCommand,
  searchCommand,
  filesCommand,
  pushNodeCommand,
  hubCommand,
  hubsCommand,
]
