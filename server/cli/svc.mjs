#!/usr/bin/env -S node --max-semi-space-size=64
// `svc` launcher for the package bin: loads the TypeScript CLI through tsx from any directory.
// The young generation is raised to 64 MB (docs/operations.md, "Memory and GC"): ingest of a
// sync backlog allocates many short-lived objects, and the default 16 MB semi-space let
// scavenges take a large share of the daemon's main thread.
import { register } from 'tsx/esm/api'

register()
await import('./main.ts')
