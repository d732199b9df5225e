import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { buildApp } from '../../server/app.ts'
import { stopGracefully } from '../../server/lifecycle.ts'
import type { Booted } from './helpers.ts'

/**
 * Two accounts' daemons in one process exchange a space's changes directly through replica
 * ingest (what a head-sync round would carry), then let both settle: row moves, live feeds.
 */
export async function exchange(from: Booted, to: Booted, spaceId: string): Promise<void> {
  const src = from.engine.account().held(spaceId)
  const dst = to.engine.account().held(spaceId)
  if (!src || !dst) throw new Error(`space ${spaceId} not held on both sides`)
  const all = await src.replica.allChanges()
  await dst.replica.ingest(
    all.map(({ id, raw }) => ({ id, raw })),
    { origin: from.accountId },
  )
  await dst.settled()
  await to.engine.account().sharing.settle(spaceId)
}

/** A peer of `from` offers `to` the space (what wire's `offered` reports), then one exchange. */
export async function offer(from: Booted, to: Booted, spaceId: string): Promise<void> {
  await to.engine.account().sharing.offered(spaceId, from.accountId)
  await exchange(from, to, spaceId)
}

/**
 * What wire does for a joiner: sends each outgoing join or cancel to a peer holding the space
 * (`ingestJoin`, authenticated as the joiner) and reports its answer back. Returns the answers.
 */
export async function deliverJoins(joiner: Booted, holder: Booted, spaceId: string): Promise<Array<string | undefined>> {
  const answers: Array<string | undefined> = []
  for (const out of await joiner.engine.account().sharing.outgoingJoins()) {
    if (out.spaceId !== spaceId) continue
    const held = holder.engine.account().held(out.spaceId)
    const status = held ? await held.replica.ingestJoin(out.change, joiner.accountId) : undefined
    answers.push(status)
    if (held) await held.settled()
    if (status) await joiner.engine.account().sharing.joins.answered(out.spaceId, status)
  }
  return answers
}

/**
 * A daemon whose account is created (`{}`) or restored (`{mnemonic}`): two restored from one
 * mnemonic are two devices of one account (same account key, own device keys and data roots).
 * `mnemonic` is set when the account was created here.
 */
export async function bootAccount(payload: { mnemonic?: string } = {}): Promise<Booted & { mnemonic?: string }> {
  const root = mkdtempSync(join(tmpdir(), 'svc-routes-'))
  const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false })
  const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
  const app = buildApp({ session, engine })
  const res = await app.inject({ method: 'POST', url: '/v1/auth', payload })
  if (res.statusCode !== 201) throw new Error(`boot failed: ${res.statusCode} ${res.body}`)
  const body = res.json<{ accountId: string; mnemonic?: string }>()
  return {
    app,
    engine,
    session,
    root,
    accountId: body.accountId,
    ...(body.mnemonic ? { mnemonic: body.mnemonic } : {}),
    async close() {
      await stopGracefully(app, 1000)
      rmSync(root, { recursive: true, force: true })
    },
  }
}

/** Waits until `pred` holds (the account engines follow tech-space rows asynchronously). */
export async function eventually(pred: () => Promise<boolean> | boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms
  while (!(await pred())) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 20))
  }
}
