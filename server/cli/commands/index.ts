import type { Command } from '../io.ts'

/** A command as the dispatcher knows it before it runs: its name, and how to load it. */
export interface CommandEntry {
  name: string
  load: () => Promise<Command>
}

/**
 * Every `svc` subcommand; a new one is a file in this folder plus a line here. Each is loaded
 * when it runs (issue 39): `svc health` loads the client and nothing of the daemon, `svc serve`
 * the daemon. test/cli/commands.test.ts checks each name against the command it loads.
 */
export const COMMANDS: readonly CommandEntry[] = [
  { name: 'serve', load: async () => (await import('../serve-command.ts')).serveCommand },
  { name: 'open', load: async () => (await import('./open.ts')).openCommand },
  { name: 'health', load: async () => (await import('./health.ts')).healthCommand },
  { name: 'auth', load: async () => (await import('./auth.ts')).authCommand },
  { name: 'shutdown', load: async () => (await import('./shutdown.ts')).shutdownCommand },
  { name: 'spaces', load: async () => (await import('./spaces.ts')).spacesCommand },
  { name: 'objects', load: async () => (await import('./objects.ts')).objectsCommand },
  { name: 'query', load: async () => (await import('./query.ts')).queryCommand },
  { name: 'modify', load: async () => (await import('./modify.ts')).modifyCommand },
  { name: 'subscribe', load: async () => (await import('./subscribe.ts')).subscribeCommand },
  { name: 'peers', load: async () => (await import('./peers.ts')).peersCommand },
  { name: 'sync-status', load: async () => (await import('./sync-status.ts')).syncStatusCommand },
  { name: 'one-to-one', load: async () => (await import('./one-to-one.ts')).oneToOneCommand },
  { name: 'invite', load: async () => (await import('./invite.ts')).inviteCommand },
  { name: 'join', load: async () => (await import('./join.ts')).joinCommand },
  { name: 'members', load: async () => (await import('./members.ts')).membersCommand },
  { name: 'chat', load: async () => (await import('./chat.ts')).chatCommand },
  { name: 'events', load: async () => (await import('./events.ts')).eventsCommand },
  { name: 'agents', load: async () => (await import('./agents.ts')).agentsCommand },
  { name: 'types', load: async () => (await import('./types.ts')).typesCommand },
  { name: 'props', load: async () => (await import('./props.ts')).propsCommand },
  { name: 'md', load: async () => (await import('./md.ts')).mdCommand },
  { name: 'history', load: async () => (await import('./history.ts')).historyCommand },
  { name: 'bundles', load: async () => (await import('./bundles.ts')).bundlesCommand },
  { name: 'catalog', load: async () => (await import('./catalog.ts')).catalogCommand },
  { name: 'aggregate', load: async () => (await import('./aggregate.ts')).aggregateCommand },
  { name: 'search', load: async () => (await import('./search.ts')).searchCommand },
  { name: 'files', load: async () => (await import('./files.ts')).filesCommand },
  { name: 'push', load: async () => (await import('./push.ts')).pushCommand },
  { name: 'profile', load: async () => (await import('./profile.ts')).profileCommand },
  { name: 'push-node', load: async () => (await import('./push-node.ts')).pushNodeCommand },
  { name: 'hub', load: async () => (await import('./hub.ts')).hubCommand },
  { name: 'hubs', load: async () => (await import('./hubs.ts')).hubsCommand },
  { name: 'completion', load: async () => (await import('./completion.ts')).completionCommand },
]
