import { afterAll } from 'vitest'
import { killLeftSvcProcesses } from '../server/process.ts'

// After each test file's own hooks (vitest runs after-hooks in reverse order, and this file's
// are registered first): every `svc` process the file started and did not stop is stopped, so
// a test that timed out or failed halfway leaves no daemon listening (issue 39, item 3).
afterAll(async () => {
  await killLeftSvcProcesses()
}, 20_000)
