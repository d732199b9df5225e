import { useEffect, useRef, useState } from 'preact/hooks'
import { describe } from './api.ts'
import { liveQuery, openStream, type FrameHandler, type Row } from './live.ts'

/** Loads once per change of `deps`; `reload` asks again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { value: T | undefined; error: string | undefined; reload: () => void } {
  const [value, setValue] = useState<T | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let live = true
    load().then(
      (v) => {
        if (!live) return
        setValue(v)
        setError(undefined)
      },
      (err: unknown) => live && setError(describe(err)),
    )
    return () => {
      live = false
    }
  }, [...deps, tick])
  return { value, error, reload: () => setTick((t) => t + 1) }
}

/** Loads now and every `ms` while mounted. */
export function usePoll<T>(load: () => Promise<T>, ms: number, deps: unknown[] = []): { value: T | undefined; error: string | undefined } {
  const r = useLoad(load, deps)
  useEffect(() => {
    const t = setInterval(r.reload, ms)
    return () => clearInterval(t)
  }, [ms, ...deps])
  return r
}

/** A windowed live query's rows while mounted; `removed` remembers why rows left (for a while). */
export function useLiveQuery(path: string | undefined, body: unknown): { rows: Row[] | undefined; removed: Map<string, string>; error: string | undefined } {
  const [rows, setRows] = useState<Row[] | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const removed = useRef(new Map<string, string>())
  const key = JSON.stringify(body)
  useEffect(() => {
    setRows(undefined)
    if (!path) return
    return liveQuery(path, body, setRows, {
      onRemoved: (id, reason) => removed.current.set(id, reason),
      onError: (e) => setError(typeof e === 'object' && e && 'error' in e ? String((e as { error: { message?: string } }).error.message) : String(e)),
    })
  }, [path, key])
  return { rows, removed: removed.current, error }
}

/** Any SSE stream while mounted. */
export function useStream(path: string | undefined, onFrame: FrameHandler, deps: unknown[] = []): void {
  const handler = useRef(onFrame)
  handler.current = onFrame
  useEffect(() => {
    if (!path) return
    return openStream(path, (e, d) => handler.current(e, d))
  }, [path, ...deps])
}
