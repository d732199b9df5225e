/** Bounds of cursor presence (cursors.ts), and of the cursor routes' bodies (server/schemas/editor-cursors.ts). */
export const CURSOR_LIMITS = {
  /** A cursor not renewed for this long is gone (y-protocols' own outdatedTimeout). */
  timeoutMs: 30_000,
  /** Distinct sender accounts heard per space; a new one past it is not heard. */
  maxSendersPerSpace: 256,
  /** Awareness clients one sender may name in a space (its devices and restarts); past it, its cursors are dropped. */
  maxClientsPerSender: 32,
  /** One event's awareness update, base64 characters. */
  maxUpdateChars: 8 * 1024,
  maxIdChars: 128,
  maxNameChars: 128,
  /** A Yjs relative position, base64 characters. */
  maxPositionChars: 256,
  /** An index a client may name in a block's text (the routes' bound; positions past the text clamp to its end). */
  maxIndex: 16 * 1024 * 1024,
} as const
