import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnSvc } from '../server/process.ts'
import { until } from './daemons.ts'

/** A real `svc hub` process, as the e2e tests start it (loopback only, any port). */
export interface HubProc {
  identity: string
  peerId: string
  /** Its TCP multiaddr on loopback, with /p2p. */
  addr: string
  /** Its WebSockets multiaddr on loopback, with /p2p (what a page dials). */
  ws: string
  operator: string
  store: string
  dir: string
  proc: ReturnType<typeof spawnSvc>
}

/** Starts hubs and removes their data when closed. */
export class HubFleet {
  private readonly hubs: HubProc[] = []

  /** `listen`: the hub's `--listen` (default TCP on loopback, any port; WebSockets are then added on loopback). */
  async start(args: string[] = [], o: { listen?: string } = {}): Promise<HubProc> {
    const dir = mkdtempSync(join(tmpdir(), 'svc-hub-'))
    const listen = o.listen ?? '/ip4/127.0.0.1/tcp/0'
    const proc = spawnSvc(['hub', '--data', dir, '--listen', listen, '--operator', '127.0.0.1:0', '--log-level', 'warn', ...args])
    await until('the hub prints its address', async () => proc.stdout().includes('\n'), 60_000, 100).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}: ${proc.stderr()}`)
    })
    const s = JSON.parse(proc.stdout().split('\n')[0]) as { identity: string; peerId: string; addrs: string[]; operator: string; store: string }
    const withId = (a: string) => (a.includes('/p2p/') ? a : `${a}/p2p/${s.peerId}`)
    const tcp = s.addrs.find((a) => a.includes('/127.0.0.1/tcp/') && !a.includes('/ws'))!
    const ws = s.addrs.find((a) => a.includes('/127.0.0.1/tcp/') && /\/ws(\/|$)/.test(a))!
    const hub = { identity: s.identity, peerId: s.peerId, addr: withId(tcp), ws: withId(ws), operator: s.operator, store: s.store, dir, proc }
    this.hubs.push(hub)
    return hub
  }

  /** An admission token for `account`, minted with `svc hub admit`. */
  async admit(hub: HubProc, account: string): Promise<string> {
    const p = spawnSvc(['hub', 'admit', account, '--data', hub.dir])
    const code = await p.exited
    if (code !== 0) throw new Error(`svc hub admit exited ${code}: ${p.stderr()}`)
    return p.stdout().trim()
  }

  close(): void {
    for (const h of this.hubs) {
      if (h.proc.proc.exitCode === null) h.proc.proc.kill('SIGKILL')
      rmSync(h.dir, { recursive: true, force: true })
    }
  }
}
