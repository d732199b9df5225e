import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import type { BootedAccount, AccountHost } from '../../node/daemon/account-host.ts'
import { AccountLifecycle, type AccountLifecycleOptions } from '../../node/daemon/account-lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { buildApp, type AppOptions } from '../../server/app.ts'

export const TOKEN = 'test-control-token'

/** A fresh data root, removed by `cleanup`. */
export function tempRoot(): string {
  return mkdtempSync(join(tmpdir(), 'svc-test-'))
}

/** An engine host that records its calls. */
export function recordingEngine(): AccountHost & { booted: BootedAccount[]; teardowns: number; failBoot?: Error } {
  const host = {
    booted: [] as BootedAccount[],
    teardowns: 0,
    failBoot: undefined as Error | undefined,
    async onBoot(account: BootedAccount) {
      if (host.failBoot) throw host.failBoot
      host.booted.push(account)
    },
    async onTeardown() {
      host.teardowns++
    },
  }
  return host
}

export interface TestApp {
  app: FastifyInstance
  session: AccountLifecycle
  engine: ReturnType<typeof recordingEngine>
  dataRoot: string
  shutdowns: number
}

const opened: Array<{ app: FastifyInstance; root?: string }> = []

export function makeApp(opts: Partial<Omit<AccountLifecycleOptions, 'engine' | 'env'>> & { app?: Partial<AppOptions>; keepRoot?: boolean } = {}): TestApp {
  const dataRoot = opts.dataRoot ?? tempRoot()
  const engine = recordingEngine()
  const mode = opts.mode ?? 'standalone'
  const session = new AccountLifecycle({
    dataRoot,
    mode,
    engine,
    env: systemEnv,
    ...(mode === 'managed' ? { controlToken: opts.controlToken ?? TOKEN } : {}),
    ...(opts.passkey !== undefined ? { passkey: opts.passkey } : {}),
    ...(opts.account !== undefined ? { account: opts.account } : {}),
  })
  const t: TestApp = { app: undefined as unknown as FastifyInstance, session, engine, dataRoot, shutdowns: 0 }
  t.app = buildApp({ session, requestShutdown: () => t.shutdowns++, ...opts.app })
  opened.push(opts.dataRoot === undefined && !opts.keepRoot ? { app: t.app, root: dataRoot } : { app: t.app })
  return t
}

/** Closes every app made since the last call and removes their data roots. */
export async function cleanup(): Promise<void> {
  for (const { app, root } of opened.splice(0)) {
    await app.close()
    if (root) rmSync(root, { recursive: true, force: true })
  }
}

export function expectError(res: LightMyRequestResponse, status: number, code: string): Record<string, unknown> | undefined {
  expect({ status: res.statusCode, body: res.json() }).toMatchObject({ status, body: { error: { code } } })
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
  const { error } = res.json<{ error: { message: string; details?: Record<string, unknown> } }>()
  expect(typeof error.message).toBe('string')
  return error.details
}

export const post = (app: FastifyInstance, url: string, payload: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, payload: payload as object, headers })

/** Creates an account through the API; returns {accountId, mnemonic}. */
export async function createAccount(app: FastifyInstance, headers: Record<string, string> = {}) {
  const res = await post(app, '/v1/auth', {}, headers)
  expect(res.statusCode).toBe(201)
  return res.json<{ accountId: string; mnemonic: string; created: boolean }>()
}

// A fixed BIP39 test vector phrase, so restore tests know the account in advance.
export const MNEMONIC = 'legal winner thank year wave sausage worth useful legal winner thank yellow'
