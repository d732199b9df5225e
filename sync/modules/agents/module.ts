import type { WriteRule } from '../../crdt/record.ts'
import { defineModule } from '../../space/module.ts'
import { AGENTS_ERROR_CODES } from './errors.ts'
import { PROGRAMS_DS, RUNS_DS, TRIGGERS_DS } from './record.ts'
import { AgentMessageVerifier } from './verify.ts'

const obj = (description: string) => ({ type: 'object', description })

/**
 * Agent records are their creator's: after the create, only ops signed by the creating
 * account apply, on every peer (another member can neither repoint a trigger's program nor
 * rewrite a program version nor delete either). The scheduler also adopts only records its own
 * account created, so a member cannot pin a program of theirs to this device.
 */
export const creatorOnly: WriteRule = ({ signer, creator }) => !creator || signer === creator.a

/**
 * Agent triggers as a module (chat.md "Agent trigger record", docs/agents.md): three dataset
 * kinds on the agents bundle's anchor (store.ts), written with `POST {S}/modify` like any
 * free dataset; registry program versions are immutable through merge pins (first write wins on
 * every peer). The runtime, the scheduler and the control API are the daemon's (node/agents,
 * server/modules/agents.ts): a space without a daemon holds the records and runs nothing.
 * Its one service marks chat messages claiming the agent as verified or not (verify.ts).
 */
export const agentsModule = defineModule({
  name: 'agents',
  dependencies: ['chat', 'events'],
  errorCodes: AGENTS_ERROR_CODES,
  datasets: [
    {
      kind: 'agent_triggers',
      canonicalKey: 'triggers',
      canonicalCollection: TRIGGERS_DS,
      sharedOnly: true,
      writeRule: creatorOnly,
      schema: {
        type: 'object',
        description: 'chat.md "Agent trigger record"',
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          kind: { enum: ['cron', 'event', 'once'] },
          spec: { description: 'cron: expression, {cron} or {every_s}; once: {at: epoch seconds}; event: {dataset: chat_messages, objectId, filter?}' },
          program: { type: 'string', description: '<name>@v<N>, agent:<name>@v<N> or internal:chat-watch' },
          programHash: {
            type: 'string',
            pattern: '^[0-9a-fA-F]{64}$',
            description:
              'hex SHA-256 of the program source: set, the trigger runs the program only if its source hashes to it (required to run a registry version another account created)',
          },
          args: obj('passed to main'),
          owner: { type: 'string', description: 'peer id of the device that runs it; empty: the election winner' },
          enabled: { type: 'boolean' },
          logRuns: { type: 'boolean' },
          limits: obj('{fuelPerRun?, timeoutS?, maxCostPerRun?}'),
          maxConsecutiveFailures: { type: 'number', default: 3 },
          lastRunAt: { type: 'number', description: 'rollup: epoch ms of the last run' },
          lastStatus: { type: 'string', description: 'ok, failed, untrusted_program, or a marker: invalid_spec, unsupported_source, auto_disabled' },
        },
        required: ['id'],
      },
    },
    {
      kind: 'agent_trigger_runs',
      canonicalKey: 'runs',
      canonicalCollection: RUNS_DS,
      sharedOnly: true,
      history: false,
      writeRule: creatorOnly,
      schema: {
        type: 'object',
        description:
          'chat.md trigger_runs: triggerId, ts, durationMs, status, error, traceRef, trace (inline) or traceFile (a file on the anchor), fuel, costUsd, tokens, memPages',
        required: ['id'],
      },
    },
    {
      kind: 'agent_programs',
      canonicalKey: 'programs',
      canonicalCollection: PROGRAMS_DS,
      sharedOnly: true,
      writeRule: creatorOnly,
      schema: { type: 'object', description: 'record id <name>@v<N>: {name, version, source}; immutable once written', required: ['id'] },
    },
  ],
  pins: { [PROGRAMS_DS]: ['name', 'version', 'source'] },
  // `agent.verified` on chat messages (verify.ts): whether the account that sent a message
  // claiming the agent runs the trigger its debugLink names.
  service: ({ space }) => new AgentMessageVerifier(space),
  onCommit: (change, verifier) => verifier.committed(change),
  overlay: { records: (verifier, objectId, dataset, docs) => verifier.overlay(objectId, dataset, docs) },
})
