import type { FastifyInstance, FastifyRequest } from 'fastify'
import { SvcError } from '../../sync/core/errors.ts'

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i

/**
 * Keys whose assignment could reach an object's prototype (the attack secure-json-parse guards
 * against). `JSON.parse` itself makes them plain own keys, but code that later copies or merges
 * the body with `obj[key] = ...` would not; they are refused at the door, by name.
 */
function refusePrototypeKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') throw prototypeKey('__proto__')
  if (key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype')) {
    throw prototypeKey('constructor.prototype')
  }
  return value
}

/** Text that may hold a key `refusePrototypeKeys` refuses: either name, or any \u escape (which can spell one). */
const MAY_HOLD_PROTOTYPE_KEY = /__proto__|constructor|\\u/

function prototypeKey(key: string): SvcError {
  return new SvcError('request.bad_json', `the request body holds the key "${key}", which is refused: it could alter object prototypes`, { key })
}

/** A charset other than UTF-8 is refused rather than decoded as UTF-8 (spec Conventions 1: JSON is UTF-8). */
function checkCharset(request: FastifyRequest): void {
  const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase()
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') return
  throw new SvcError('request.unsupported_media_type', `request bodies must be UTF-8 JSON; charset=${charset} is not accepted`)
}

/** Parses a JSON request body: UTF-8 only (invalid bytes are an error, not U+FFFD), no prototype keys. */
export function parseJsonBody(request: FastifyRequest, raw: Buffer): unknown {
  checkCharset(request)
  // An empty JSON body counts as no body (see installBodyParsing).
  if (raw.length === 0) return undefined
  let text: string
  try {
    text = UTF8.decode(raw)
  } catch {
    throw new SvcError('request.bad_json', 'the request body is not valid UTF-8')
  }
  try {
    // A reviver costs a call per key and value (a bulk create's body: about 1% of its CPU).
    // Without either name in the text, even spelled with \u escapes, no key can be one of them.
    return MAY_HOLD_PROTOTYPE_KEY.test(text) ? JSON.parse(text, refusePrototypeKeys) : JSON.parse(text)
  } catch (err) {
    if (err instanceof SvcError) throw err
    throw new SvcError('request.bad_json', 'the request body is not valid JSON')
  }
}

/**
 * Body parsing (spec Conventions 1): JSON only. `text/plain` bodies are refused (415) instead
 * of reaching routes as strings; an empty JSON body counts as no body, so body-less routes
 * accept a stray `Content-Type: application/json` and body routes answer 400 `request.bad_json`.
 * A module that takes another media type (an upload) registers its own parser inside its
 * plugin, where it applies to its routes only.
 */
export function installBodyParsing(app: FastifyInstance): void {
  app.removeContentTypeParser(['text/plain', 'application/json'])
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, parseJsonBody(request, body as Buffer))
    } catch (err) {
      done(err as Error, undefined)
    }
  })
}
