import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten'
import { stopMessage, type StopReason } from './sandbox-vm-contract.ts'

/**
 * Values across the sandbox's edge: JSON text into and out of QuickJS through the sandbox's own
 * JSON, a thrown value's message, and the runtime's memory in pages. Each disposes the handles
 * it makes or is handed. This file is loaded by the sandbox thread without tsx (see sandbox-vm.ts): erasable TypeScript only.
 */

/** The message of a thrown value (the handle is disposed); an interrupt says which budget stopped it. */
export function errorText(vm: QuickJSContext, h: QuickJSHandle, stop: StopReason | undefined): string {
  try {
    const d = vm.dump(h) as unknown
    if (stop && d && typeof d === 'object' && (d as { message?: unknown }).message === 'interrupted') return stopMessage(stop)
    if (d && typeof d === 'object' && typeof (d as { message?: unknown }).message === 'string') {
      const e = d as { name?: string; message: string }
      return e.name && e.name !== 'Error' ? `${e.name}: ${e.message}` : e.message
    }
    return typeof d === 'string' ? d : (JSON.stringify(d) ?? String(d))
  } catch {
    return 'the program threw a value that cannot be shown'
  } finally {
    if (h.alive) h.dispose()
  }
}

/**
 * A JSON value made inside the sandbox by its own JSON.parse (no host object crosses). A parse
 * that fails (it cannot, for text the daemon checked, but a failure must not leave a handle
 * behind: a live handle at teardown aborts QuickJS) disposes its error and says why.
 */
export function fromJsonText(vm: QuickJSContext, text: string): { handle: QuickJSHandle; error?: undefined } | { error: string } {
  const textH = vm.newString(text)
  const json = vm.getProp(vm.global, 'JSON')
  const parse = vm.getProp(json, 'parse')
  const res = vm.callFunction(parse, json, textH)
  textH.dispose()
  parse.dispose()
  json.dispose()
  if (res.error) return { error: errorText(vm, res.error, undefined) }
  return { handle: res.value }
}

/** A sandbox value as JSON text, through the sandbox's own JSON.stringify (undefined becomes null). */
export function toJsonText(vm: QuickJSContext, h: QuickJSHandle, valueBytes: number): string {
  const json = vm.getProp(vm.global, 'JSON')
  const stringify = vm.getProp(json, 'stringify')
  const res = vm.callFunction(stringify, json, h)
  stringify.dispose()
  json.dispose()
  if (res.error) {
    res.error.dispose()
    return 'null'
  }
  const s = vm.typeof(res.value) === 'string' ? vm.getString(res.value) : undefined
  res.value.dispose()
  if (s === undefined) return 'null'
  if (s.length > valueBytes) return JSON.stringify({ truncated: true, bytes: s.length })
  return s
}

/** WebAssembly pages (64 KiB) the runtime holds, from its own accounting. */
export function memoryPages(vm: QuickJSContext, rt: QuickJSRuntime): number {
  try {
    const h = rt.computeMemoryUsage()
    const usage = vm.dump(h) as { memory_used_size?: number }
    h.dispose()
    return Math.ceil((usage.memory_used_size ?? 0) / 65536)
  } catch {
    return 0
  }
}
