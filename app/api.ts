/**
 * The app's only way to the daemon: the generated typed client (server/client) on the page's
 * own origin, plus the SSE streams of live.ts. Every failure becomes an ApiError carrying the
 * spec's envelope code, so screens show what went wrong in the API's words.
 */
import { createSvcClient } from '../server/client/index.ts'

export const api = createSvcClient({ baseUrl: location.origin })

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message)
  }
}

interface Answer<T> {
  data?: T
  error?: unknown
  response: Response
}

/** The answer's body, or an ApiError from its envelope (a refused connection is `daemon.unreachable`). */
export async function ok<T>(call: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>
  try {
    answer = await call
  } catch (err) {
    throw new ApiError('daemon.unreachable', `the daemon did not answer: ${String(err)}`, 0)
  }
  if (answer.error !== undefined || !answer.response.ok) {
    const env = (answer.error ?? {}) as { error?: { code?: string; message?: string } }
    throw new ApiError(env.error?.code ?? 'http.' + answer.response.status, env.error?.message ?? answer.response.statusText, answer.response.status)
  }
  return answer.data as T
}

/** Raw JSON calls for the few paths whose bodies the app builds dynamically (property maps). */
export async function call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response
  try {
    res = await fetch(path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  } catch (err) {
    throw new ApiError('daemon.unreachable', `the daemon did not answer: ${String(err)}`, 0)
  }
  const text = await res.text()
  const json: unknown = text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text
  if (!res.ok) {
    const env = json as { error?: { code?: string; message?: string } }
    throw new ApiError(env.error?.code ?? 'http.' + res.status, env.error?.message ?? res.statusText, res.status)
  }
  return json as T
}

export const spacePath = (spaceId: string) => `/v1/spaces/${encodeURIComponent(spaceId)}`
export const objectPath = (spaceId: string, objectId: string) => `${spacePath(spaceId)}/objects/${encodeURIComponent(objectId)}`

/** A message for the user from any thrown value. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) return `${err.message} (${err.code})`
  return err instanceof Error ? err.message : String(err)
}
