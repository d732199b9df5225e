export * from './adapter.ts'
export { MemoryStorageAdapter, compareUtf8 } from './memory.ts'
export { IndexedDbStorageAdapter, type IndexedDbStorageOptions } from './indexeddb.ts'
// conformance.ts is test-only (it imports vitest) and deliberately not re-exported here.
