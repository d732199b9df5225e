/**
 * How file bytes leave the API (docs/security.md "The local machine"): the API's origin never
 * serves active content. A file's media type and name come from a record any member may write,
 * so neither is trusted: the type served is chosen from a short allowlist of passive types, and
 * everything else goes out as an opaque attachment.
 */

/**
 * Types a browser renders without running anything of the file's: raster images (never SVG,
 * which is a document that runs script), audio, video, PDF. Read as the media type's essence
 * (lowercase, no parameters).
 */
const PASSIVE_INLINE: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'audio/mpeg',
  'audio/mp4',
  'audio/aac',
  'audio/ogg',
  'audio/opus',
  'audio/wav',
  'audio/webm',
  'audio/flac',
  'video/mp4',
  'video/webm',
  'video/ogg',
  'video/quicktime',
  'application/pdf',
])

/** Plain text is rendered as text by every browser; any other text/* (html, xml, css, javascript) is not passive. */
const PLAIN_TEXT = 'text/plain; charset=utf-8'

/** What every attachment is labelled: a type no browser renders, sniffs (with nosniff) or runs as a script or style. */
const OPAQUE = 'application/octet-stream'

/** The headers every response of the API carries (server/app.ts installs them on every reply). */
export const NOSNIFF = 'nosniff'
/** No subresource may load and the document gets an opaque origin without scripts, forms or plugins. */
export const SANDBOX_CSP = "default-src 'none'; sandbox"

/**
 * The web app's own pages (server/http/app-static.ts), the only active content the API's origin
 * serves: scripts and styles from this origin only, no inline script, no frames, no plugins,
 * connections to this origin only. User content stays inert: files are served under
 * SANDBOX_CSP, and the app shows images through `blob:` URLs of bytes it fetched.
 */
export const APP_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ')

export interface Served {
  contentType: string
  disposition: string
}

/** `type/subtype` in lowercase, or undefined when the record's string is not a media type. */
export function mediaEssence(mime: string): string | undefined {
  const essence = mime.split(';', 1)[0].trim().toLowerCase()
  return /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(essence) ? essence : undefined
}

/**
 * RFC 6266 / 8187: a quoted ASCII fallback with anything that could end the parameter, leave
 * a directory or confuse a shell replaced, and the exact name percent-encoded in `filename*`.
 */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const trimmed = name.slice(0, 255)
  const ascii =
    trimmed
      .replace(/[^\x20-\x7e]|["\\/%;]/g, '_')
      .replace(/^\.+/, '_')
      .trim() || 'file'
  const encoded = encodeURIComponent(trimmed).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${kind}; filename="${ascii}"${encoded ? `; filename*=UTF-8''${encoded}` : ''}`
}

/** The type and disposition a file (or a variant) named `name` with the record's `mime` is served with. */
export function servedAs(mime: string, name: string): Served {
  const essence = mediaEssence(mime)
  if (essence !== undefined && PASSIVE_INLINE.has(essence)) return { contentType: essence, disposition: contentDisposition('inline', name) }
  if (essence === 'text/plain') return { contentType: PLAIN_TEXT, disposition: contentDisposition('inline', name) }
  return { contentType: OPAQUE, disposition: contentDisposition('attachment', name) }
}
