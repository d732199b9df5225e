#!/usr/bin/env node
import { main } from './dispatch.ts'

const code = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env })
process.exitCode = code
// Exit even if a library left a handle open (stdout/stderr on pipes and files are synchronous).
setTimeout(() => process.exit(code), 1000).unref()
