import { SvcError } from '../../sync/core/errors.ts'
import type { Json, JsonObject } from '../../sync/crdt/ops.ts'
import { chatModule } from '../../sync/modules/chat/module.ts'
import { eventsModule } from '../../sync/modules/events/module.ts'
import { AGENT_LIMITS } from '../../sync/modules/agents/limits.ts'
import { AGENT_NAME } from '../../sync/modules/agents/program-ref.ts'
import { generalChatIdOf } from '../../sync/modules/agents/store.ts'
import { triggerLink } from '../../sync/modules/agents/verify.ts'
import { parseSnapshotBody } from '../../sync/query/body.ts'
import { runQuery } from '../../sync/query/snapshot.ts'
import type { AccountEngine } from '../../sync/space/account-engine.ts'
import type { SpaceEngine } from '../../sync/space/space-engine.ts'
import { modifyDeclared } from '../../sync/space/types/declared-writes.ts'
import { complete, type ChatMessage, type ModelConfig } from './model-client.ts'
import type { Capability } from './sandbox.ts'

/** What one run spent on model calls (the run record's `costUsd` and `tokens`). */
export interface Spend {
  costUsd: number
  tokens: number
  calls: number
}

export interface CapabilityContext {
  account: AccountEngine
  /** The trigger's own space: the only one a program reaches. */
  space: SpaceEngine
  model?: ModelConfig
  maxCostUsd?: number
  spend: Spend
  /** The trigger whose run this is (absent for `POST /run`): named in the `agent` group of what it sends. */
  triggerId?: string
}

const isObj = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A body naming another space is refused: the capability is bound to the trigger's own. */
function ownSpace(ctx: CapabilityContext, arg: Json): JsonObject {
  if (!isObj(arg)) throw new SvcError('request.invalid_field', 'the argument is an object')
  if (arg.spaceId !== undefined && arg.spaceId !== ctx.space.spaceId) throw new SvcError('request.invalid_field', 'a program reaches only its own space', { field: 'spaceId' })
  const { spaceId: _drop, ...rest } = arg
  return rest
}

/**
 * The capability API a program gets as `svc` (docs/agents.md "Capability API"): query and
 * modify in the trigger's own space, chat send marked with the `agent` group, event bus
 * publish, a model call. Nothing else: no fs, no network, no other space.
 */
export function capabilities(ctx: CapabilityContext): Record<string, Capability> {
  return {
    query: async (arg) => {
      const body = parseSnapshotBody(ownSpace(ctx, arg), { perObject: true, requireDataset: true })
      const res = runQuery(await ctx.space.datasetSource(body.objectId!, body.dataset!), body.query)
      return res as unknown as Json
    },
    modify: async (arg) => {
      const b = ownSpace(ctx, arg)
      if (typeof b.objectId !== 'string' || typeof b.dataset !== 'string' || !Array.isArray(b.records))
        throw new SvcError('request.invalid_field', 'modify takes {objectId, dataset, records}')
      return (await modifyDeclared(ctx.space, { objectId: b.objectId, dataset: b.dataset, records: b.records as never })) as unknown as Json
    },
    chatSend: async (arg) => {
      const b = ownSpace(ctx, typeof arg === 'string' ? { text: arg } : arg)
      const objectId = typeof b.objectId === 'string' ? b.objectId : generalChatIdOf(ctx.space.spaceId)
      // The debugLink names the trigger: readers verify the message against that trigger's
      // record (sync/modules/agents/verify.ts); a run without a trigger sends an unverified one.
      const agent: JsonObject = { name: AGENT_NAME, done: b.done !== false }
      if (ctx.triggerId !== undefined) agent.debugLink = triggerLink(ctx.space.spaceId, ctx.triggerId)
      const body: JsonObject = { text: b.text ?? '', agent }
      if (typeof b.replyToMessageId === 'string') body.replyToMessageId = b.replyToMessageId
      const res = await ctx.space.services.of(chatModule).send(objectId, body)
      return { messageId: res.recordIds[0] }
    },
    publish: async (arg) => {
      const b = ownSpace(ctx, arg)
      const scope = typeof b.scope === 'string' ? b.scope : 'space'
      const draft: JsonObject = { ...b, scope }
      if (scope === 'space') draft.spaceId = ctx.space.spaceId
      const delivered = ctx.account.services.of(eventsModule).publish(draft)
      return { delivered }
    },
    model: async (arg) => {
      const b = isObj(arg) ? arg : {}
      const { text, tokens, costUsd } = await callModel(ctx, b.messages, typeof b.maxTokens === 'number' ? b.maxTokens : undefined)
      return { text, tokens, costUsd }
    },
  }
}

/** One model call under the run's budget: refused once `maxCostPerRun` is spent or the call count is reached. */
export async function callModel(ctx: CapabilityContext, messages: unknown, maxTokens?: number) {
  if (!ctx.model) throw new Error('no model provider is configured')
  if (!Array.isArray(messages) || !messages.every((m) => isObj(m) && typeof m.content === 'string' && (m.role === 'system' || m.role === 'user' || m.role === 'assistant'))) {
    throw new Error('messages is an array of {role: system|user|assistant, content}')
  }
  if (ctx.spend.calls >= AGENT_LIMITS.modelCallsPerRun) throw new Error(`at most ${AGENT_LIMITS.modelCallsPerRun} model calls per run`)
  if (ctx.maxCostUsd !== undefined && ctx.spend.costUsd >= ctx.maxCostUsd) throw new Error('maxCostPerRun reached: no more model calls in this run')
  ctx.spend.calls++
  const answer = await complete(ctx.model, ctx.space.env, messages as ChatMessage[], maxTokens)
  ctx.spend.costUsd += answer.costUsd
  ctx.spend.tokens += answer.tokens
  return answer
}
