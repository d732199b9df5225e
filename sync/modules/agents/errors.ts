/**
 * The agents module's own codes (the control API's; trigger health is `lastStatus`, never an
 * HTTP error, chat.md Errors). Statuses: server/modules/agents.ts.
 */
declare module '../../core/errors.ts' {
  interface ModuleErrorCodes {
    'agents.trigger_not_found': true
    'agents.program_not_found': true
  }
}

export const AGENTS_ERROR_CODES = ['agents.trigger_not_found', 'agents.program_not_found'] as const
