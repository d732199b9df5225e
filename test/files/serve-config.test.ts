import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { UsageError } from '../../server/cli/io.ts'
import { resolveServeConfig } from '../../server/cli/serve-config.ts'

const dir = mkdtempSync(join(tmpdir(), 'svc-files-config-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('files.gcInterval in svc serve configuration', () => {
  it('comes from the config file key files.gcInterval, SVC_FILES_GC_INTERVAL or --files-gc-interval, flags first; absent or 0 is off', () => {
    const path = join(dir, 'c.json')
    writeFileSync(path, JSON.stringify({ files: { gcInterval: 60000 } }))
    expect(resolveServeConfig(['--config', path], {}).filesGcInterval).toBe(60000)
    expect(resolveServeConfig(['--config', path], { SVC_FILES_GC_INTERVAL: '5000' }).filesGcInterval).toBe(5000)
    expect(resolveServeConfig(['--config', path, '--files-gc-interval', '7'], { SVC_FILES_GC_INTERVAL: '5000' }).filesGcInterval).toBe(7)
    expect(resolveServeConfig([], {}).filesGcInterval).toBeUndefined()
    expect(resolveServeConfig(['--files-gc-interval', '0'], {}).filesGcInterval).toBeUndefined()
  })
  it('refuses a negative or non-numeric interval and unknown keys under files', () => {
    expect(() => resolveServeConfig(['--files-gc-interval', '-1'], {})).toThrow(UsageError)
    expect(() => resolveServeConfig([], { SVC_FILES_GC_INTERVAL: 'soon' })).toThrow(UsageError)
    const path = join(dir, 'bad.json')
    writeFileSync(path, JSON.stringify({ files: { gcInterval: 5, other: 1 } }))
    expect(() => resolveServeConfig(['--config', path], {})).toThrow(UsageError)
  })
})
