import { errField } from '../../sync/core/log.ts'
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { DaemonHost, type DaemonHostOptions } from '../../node/daemon/daemon-host.ts'
import { WorkerBlockCrypto } from '../../node/files/worker-block-crypto.ts'
import { serverModules } from '../modules/index.ts'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { isSvcError } from '../../sync/core/errors.ts'
import { buildApp } from '../app.ts'
import { daemonLoggers } from '../../node/log/pino-logger.ts'
import { stopGracefully } from '../lifecycle.ts'
import { EXIT, type CliIO } from './io.ts'
import { AGENTS_PORT_OFFSET, type ServeConfig } from './serve-config.ts'
import { buildAgentControlApp, listenAgentControl } from '../modules/agents.ts'
import { noAccountHint, spaceOpenProgress } from './serve-messages.ts'

const baseUrl = (host: ServeConfig['host'], port: number) => `http://${host === '::1' ? '[::1]' : host}:${port}`

const describe = (err: unknown) => (isSvcError(err) ? `${err.code}: ${err.message}` : (err as Error).message)

/**
 * `svc serve`: runs the daemon until SIGTERM/SIGINT (or `POST /v1/shutdown` when managed).
 * stdout line 1: the base URL; line 2 (managed): the control token. Diagnostics go to stderr.
 * The returned promise settles when the server has stopped.
 */
export async function serve(config: ServeConfig, io: CliIO, engineFactory: (o: DaemonHostOptions) => DaemonHost = (o) => new DaemonHost(o)): Promise<number> {
  mkdirSync(config.data, { recursive: true, mode: 0o700 })
  // One pino root for HTTP and every component (`--log-level`); `--log` adds the request lines.
  const loggers = daemonLoggers(config.logLevel, io.stderr)
  // Hex: safe as a command-line argument (a base64url token may start with '-').
  const controlToken = config.managed ? randomBytes(32).toString('hex') : undefined
  // Files seal and open blocks on a thread of their own (node/files/worker-block-crypto.ts).
  const blockCrypto = new WorkerBlockCrypto()
  // One modules list, with the settings the configuration names, for the engine's account and the app's routes.
  const modules = serverModules({
    files: { blockCrypto, ...(config.filesGcInterval ? { gcIntervalMs: config.filesGcInterval } : {}) },
    ...(config.cursorTimeoutMs !== undefined ? { editor: { cursorTimeoutMs: config.cursorTimeoutMs } } : {}),
  })
  // Agents run unless the control port is -1 ("off"); its port is settled once the API listens.
  const agentsOn = config.agentsPort === undefined || config.agentsPort >= 0
  const engine = engineFactory({
    dataRoot: config.data,
    noMdns: config.noMdns,
    durability: config.durability,
    memoryBudget: { bytes: config.memoryBudgetMb * 1024 * 1024 },
    modules,
    ...(!agentsOn
      ? {}
      : { agents: config.modelUrl ? { model: { url: config.modelUrl, model: config.model ?? 'default', ...(config.modelApiKey ? { apiKey: config.modelApiKey } : {}) } } : {} }),
    onSpaceOpened: spaceOpenProgress((line) => io.stderr.write(line)),
    ...(config.p2pListen ? { p2pListen: config.p2pListen } : {}),
    ...(config.peers ? { peers: config.peers } : {}),
    ...(config.hubs ? { hubs: config.hubs } : {}),
    ...(config.push ? { push: config.push } : {}),
    log: loggers.log,
  })
  const session = new AccountLifecycle({
    dataRoot: config.data,
    mode: config.managed ? 'managed' : 'standalone',
    engine,
    env: systemEnv,
    durability: config.durability,
    log: loggers.log.child('accounts'),
    ...(controlToken ? { controlToken } : {}),
    ...(config.passkey !== undefined ? { passkey: config.passkey } : {}),
    ...(config.account !== undefined ? { account: config.account } : {}),
  })

  let stopped!: () => void
  const done = new Promise<void>((r) => (stopped = r))
  let stopping: Promise<void> | undefined
  let exitCode: number = EXIT.ok
  let control = agentsOn ? buildAgentControlApp(() => engine.agents()) : undefined
  const stop = () => {
    stopping ??= Promise.resolve(control?.close())
      .catch((err: unknown) => loggers.log.warn('closing the agents control API failed', { err: errField(err) }))
      .then(() => stopGracefully(app))
      .then(() => blockCrypto.close())
      .then(stopped, (err: unknown) => {
        io.stderr.write(`svc serve: error while stopping: ${describe(err)}\n`)
        exitCode = EXIT.server
        stopped()
      })
    return stopping
  }
  const app = buildApp({
    session,
    engine,
    modules,
    requestShutdown: () => void stop(),
    loggerInstance: loggers.root.child({ scope: 'http' }, { level: config.log ? 'info' : 'warn' }),
    requestLogs: config.log,
  })

  try {
    const booted = await session.bootAtStart()
    if (booted) io.stderr.write(`svc serve: account ${booted} booted\n`)
  } catch (err) {
    // Spec Authentication 6: the account is another process's. Running on unauthorized would
    // only advise commands that cannot work (issue 39, item 4).
    if (isSvcError(err) && err.code === 'auth.account_in_use') {
      const pid = typeof err.details?.pid === 'number' ? err.details.pid : undefined
      io.stderr.write(
        `svc serve: ${describe(err)}${pid !== undefined ? ` (pid ${pid})` : ''}: another svc serve runs on the data directory ${config.data}. ` +
          `Stop it${pid !== undefined ? ` (kill ${pid})` : ''} or use it (svc health shows its account), or start this one with another --data.\n`,
      )
      await app.close()
      return EXIT.user
    }
    if (config.account !== undefined) {
      io.stderr.write(`svc serve: cannot boot account ${config.account}: ${describe(err)}\n`)
      await app.close()
      return EXIT.user
    }
    io.stderr.write(`svc serve: starting unauthorized; the account on disk did not boot: ${describe(err)}\n`)
  }

  try {
    await app.listen({ host: config.host, port: config.port })
  } catch (err) {
    io.stderr.write(`svc serve: cannot listen on ${config.host}:${config.port}: ${(err as Error).message}\n`)
    await app.close()
    return EXIT.user
  }
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : config.port
  const url = baseUrl(config.host, port)
  io.stdout.write(`${url}\n`)
  if (controlToken) io.stdout.write(`${controlToken}\n`)
  if (control) {
    // The control API is an extra: a daemon whose control port is taken still serves its API.
    // Its default port follows the API's (AGENTS_PORT_OFFSET), and any free one when that is taken.
    const derived = config.agentsPort === undefined
    const want = derived ? (config.port === 0 ? 0 : port + AGENTS_PORT_OFFSET) : config.agentsPort!
    try {
      let cport: number
      try {
        cport = await listenAgentControl(control, { host: config.host, port: want })
      } catch (err) {
        if (!derived || want === 0 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err
        io.stderr.write(`svc serve: agent control port ${want} is taken; using any free port\n`)
        await control.close()
        control = buildAgentControlApp(() => engine.agents())
        cport = await listenAgentControl(control, { host: config.host, port: 0 })
      }
      io.stderr.write(`svc serve: agent control API on ${baseUrl(config.host, cport)} (svc agents --control ${baseUrl(config.host, cport)}, or SVC_AGENTS_URL)\n`)
    } catch (err) {
      io.stderr.write(`svc serve: agent control API not started: ${(err as Error).message}\n`)
    }
  }
  const hint = noAccountHint(session.status(), url)
  if (hint) io.stderr.write(hint)

  // Kept until the process exits: a repeated signal while draining (or just after) is ignored
  // rather than killing the process halfway; the drain is bounded anyway.
  const onSignal = () => void stop()
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
  await done
  return exitCode
}
