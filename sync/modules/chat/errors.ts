/**
 * Chat's error codes (chat.md Errors): declared by the module, so the core union does not list
 * them; the server's chat module gives their statuses.
 */
declare module '../../core/errors.ts' {
  interface ModuleErrorCodes {
    'chat.text_required': true
    'chat.agent_invalid': true
    'chat.not_author': true
    'chat.not_found': true
  }
}

export const CHAT_ERROR_CODES = ['chat.text_required', 'chat.agent_invalid', 'chat.not_author', 'chat.not_found'] as const
