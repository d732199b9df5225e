import type { Env } from '../../sync/core/env.ts'

/**
 * The model provider: an OpenAI-compatible chat-completions endpoint (`POST <url>/chat/completions`),
 * configured by URL and model name. The only network the agents reach, and only from the host:
 * a program calls it through the `model` capability, never directly.
 */
export interface ModelConfig {
  /** Base URL, e.g. `http://127.0.0.1:8080/v1`. */
  url: string
  model: string
  /** Sent as a bearer token when set. */
  apiKey?: string
  /** Price used for `costUsd` and `maxCostPerRun` (USD per million tokens, prompt and completion alike). */
  usdPerMTok?: number
  timeoutMs?: number
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

export interface ModelAnswer {
  text: string
  tokens: number
  costUsd: number
}

const MAX_ANSWER_BYTES = 64 * 1024

export async function complete(cfg: ModelConfig, env: Env, messages: ChatMessage[], maxTokens?: number): Promise<ModelAnswer> {
  const ctl = new AbortController()
  const cancel = env.setTimer(cfg.timeoutMs ?? 60_000, () => ctl.abort())
  try {
    const res = await fetch(`${cfg.url.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {}) },
      body: JSON.stringify({ model: cfg.model, messages, ...(maxTokens ? { max_tokens: maxTokens } : {}) }),
      signal: ctl.signal,
    })
    const text = await res.text()
    if (!res.ok) throw new Error(`model provider answered ${res.status}`)
    if (text.length > MAX_ANSWER_BYTES * 4) throw new Error('model answer too large')
    const body = JSON.parse(text) as {
      choices?: Array<{ message?: { content?: unknown } }>
      usage?: { total_tokens?: unknown; prompt_tokens?: unknown; completion_tokens?: unknown }
    }
    const content = body.choices?.[0]?.message?.content
    if (typeof content !== 'string') throw new Error('model answer has no choices[0].message.content')
    const u = body.usage ?? {}
    const tokens = typeof u.total_tokens === 'number' ? u.total_tokens : (Number(u.prompt_tokens) || 0) + (Number(u.completion_tokens) || 0)
    return { text: content.slice(0, MAX_ANSWER_BYTES), tokens, costUsd: (tokens * (cfg.usdPerMTok ?? 0)) / 1e6 }
  } catch (err) {
    if (ctl.signal.aborted) throw new Error('model call timed out', { cause: err })
    throw err
  } finally {
    cancel()
  }
}
