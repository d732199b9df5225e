/**
 * Programs shipped with the daemon, named `agent:<name>@v<N>` (docs/agents.md "Program
 * registry"). They run in the sandbox like any registry version; a new behaviour is a new
 * version, never an edit of a released one.
 */
export const BUILTIN_PROGRAMS: Readonly<Record<string, string>> = {
  'agent:echo@v1': 'function main(args) { return args }',
  'agent:noop@v1': 'function main() { return null }',
  'agent:say@v1': 'async function main(args, svc) { return await svc.chatSend({ text: String(args.text ?? (args.event && args.event.text) ?? "") }) }',
}
