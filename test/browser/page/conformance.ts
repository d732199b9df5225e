/**
 * The storage conformance page: sync/storage/conformance.ts (whatever it holds today) against
 * IndexedDbStorageAdapter on this browser's real IndexedDB. test/browser/conformance.browser.ts
 * opens it and reads `window.conformance`.
 */
import fc from 'fast-check'
import { runStorageAdapterConformance } from '../../../sync/storage/conformance.ts'
import { IndexedDbStorageAdapter } from '../../../sync/storage/indexeddb.ts'
import { run, type TestResult } from './runner.ts'

// The seed and bound of test/setup/fast-check.ts, so a failure here replays under npm test.
// eslint-disable-next-line @typescript-eslint/no-deprecated -- as in test/setup/fast-check.ts
fc.configureGlobal({ seed: 20261123, interruptAfterTimeLimit: 45_000, markInterruptAsFailure: true })

let n = 0
runStorageAdapterConformance('indexeddb (Chromium)', async () => {
  const dbName = `svc-conformance-${Date.now()}-${n++}`
  const open = () => new IndexedDbStorageAdapter({ dbName })
  return {
    adapter: open(),
    reopen: async () => open(),
    teardown: () =>
      new Promise<void>((resolve, reject) => {
        const req = indexedDB.deleteDatabase(dbName)
        req.onsuccess = () => resolve()
        req.onerror = () => reject(req.error)
        // Closed connections are waited for; a leftover one must not hang the run.
        req.onblocked = () => resolve()
      }),
  }
})

const state: { done: boolean; results: TestResult[] } = { done: false, results: [] }
;(window as unknown as { conformance: typeof state }).conformance = state
const log = document.getElementById('log')!
void run((r) => {
  state.results.push(r)
  log.textContent += `${r.ok ? 'ok  ' : 'FAIL'} ${r.name} (${r.ms} ms)\n`
}).then(() => {
  state.done = true
})
