/**
 * What the daemon (sandbox.ts) and the sandbox thread (sandbox-thread.ts, sandbox-vm.ts) agree
 * on: a run and its budgets, the shared stop/fuel/beat/busy words, a run's result and the
 * messages a stop gives. This file is loaded by the sandbox thread without tsx (see sandbox-vm.ts): erasable TypeScript only.
 */

export interface VmBudgets {
  fuel: number
  fuelUnitUs: number
  memoryBytes: number
  stackBytes: number
  /** Trace kept inline, in characters. */
  traceBytes: number
  /** A returned value's JSON text above this many characters is replaced by its size. */
  valueBytes: number
}

export interface VmRun {
  source: string
  /** The args, as JSON text the daemon depth-checked. */
  argsText: string
  /** Capability names: `svc.<name>`. */
  names: string[]
  budgets: VmBudgets
}

/** Shared with the daemon (Int32Array over a SharedArrayBuffer): see SHARED below. */
export const SHARED = {
  /** Set to a STOP_* code by the daemon; read by the interrupt handler. */
  stop: 0,
  /** Fuel spent so far in the current run (what the daemon reports if it must kill the thread). */
  fuel: 1,
  /** Bumped at every interrupt check: the daemon sees a thread stuck in one native call. */
  beat: 2,
  /** 1 while the program computes, 0 while it waits for a capability or no run is on. */
  busy: 3,
  length: 4,
} as const

export const STOP_TIMEOUT = 1

export type StopReason = 'fuel' | 'timeout'

export interface VmResult {
  status: 'ok' | 'failed'
  /** The returned value's JSON text (`null` when there is none). */
  valueText: string
  error: string | null
  fuelUsed: number
  memPages: number
  trace: string[]
  /**
   * QuickJS aborted while tearing the run down (a leak inside QuickJS, seen after a deep
   * `JSON.stringify` overflowed its stack): the result stands, but this WebAssembly instance is
   * no longer sound, so the thread must be replaced.
   */
  teardownFailed?: string
}

/** The host side of capability calls: JSON text in, JSON text out (or a rejection with a message). */
export type HostCall = (name: string, argText: string) => Promise<string>

export const stopMessage = (stop: StopReason): string => (stop === 'fuel' ? 'fuel exhausted: the run used its whole fuel budget' : 'timeout: the run passed its time budget')
