#!/usr/bin/env node
// `svc` launcher for the package bin: loads the TypeScript CLI through tsx from any directory.
import { register } from 'tsx/esm/api'

register()
await import('./main.ts')
