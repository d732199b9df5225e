import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { call, describe, objectPath, spacePath } from '../api.ts'
import { useLiveQuery, useLoad, usePoll } from '../hooks.ts'
import { instant } from './cells.tsx'
import { FileImage, Uploads, uploadFile } from './files.tsx'

interface Message {
  id: string
  creator: string
  text?: string
  replyToMessageId?: string
  mentions?: string[]
  attachments?: Record<string, { type: string; link: string }>
  reactions?: Record<string, Record<string, unknown>>
  unread?: boolean
  unreadMention?: boolean
  createdAt?: unknown
  _ver?: { id: string }
}

interface Member {
  identity: string
  name: string
  status: string
}

const REACTIONS = ['👍', '❤️', '😄', '🎉']
const WINDOW = 200
/** A message must stay on screen this long before it counts as read (chat.md client rule 2). */
const READ_AFTER_MS = 1000

/** The space's general chat: installed or adopted by the catalog (a pure function of the space), so every member gets the same one. */
async function generalChat(spaceId: string): Promise<string> {
  const res = await call<{ bundles: Array<{ bundle: { rootId?: string } }> }>('POST', '/v1/catalog/general-chat/setup', { spaceId })
  const root = res.bundles.map((b) => b.bundle.rootId).find((r): r is string => !!r)
  if (!root) throw new Error('the general chat has no root yet')
  return root
}

/** The chat rows' counters (unread, mentions), for badges; live. */
export function useChatCounters(spaceId: string): { unread: number; mentions: number } {
  const owners = usePoll(
    async () =>
      (await call<{ datasets: Array<{ name: string; owners?: string[] }> }>('GET', `${spacePath(spaceId)}/datasets`)).datasets.find((d) => d.name === 'chat_messages')?.owners ??
      [],
    5000,
    [spaceId],
  )
  const key = (owners.value ?? []).join(',')
  const rows = useLiveQuery(key ? `${spacePath(spaceId)}/objects/query/subscribe` : undefined, { filter: { 'core.types': { $in: owners.value } } })
  let unread = 0
  let mentions = 0
  for (const r of rows.rows ?? []) {
    const c = r.chat as { unreadCount?: number; unreadMentions?: number } | undefined
    unread += c?.unreadCount ?? 0
    mentions += c?.unreadMentions ?? 0
  }
  return { unread, mentions }
}

/** Message text with mention links shown as @names and other links as text: never HTML. */
function MessageText({ text, names }: { text: string; names: Map<string, string> }) {
  const out: preact.ComponentChildren[] = []
  const re = /\[([^\]]*)\]\((svc:\/\/m\/[^/)]+\/([^)\s]+))\)/g
  let at = 0
  let m: RegExpExecArray | null
  while ((m = re.exec(text))) {
    out.push(text.slice(at, m.index))
    out.push(
      <span class="mention" key={m.index}>
        @{names.get(m[3]) ?? m[1].replace(/^@/, '')}
      </span>,
    )
    at = m.index + m[0].length
  }
  out.push(text.slice(at))
  return <span class="message-text">{out}</span>
}

export function ChatScreen({ spaceId, account, readOnly }: { spaceId: string; account: string; readOnly: boolean }) {
  const chat = useLoad(() => generalChat(spaceId), [spaceId])
  const root = chat.value
  const live = useLiveQuery(root ? `${spacePath(spaceId)}/query/subscribe` : undefined, { objectId: root, dataset: 'chat_messages', sort: ['-_ver.id'], limit: WINDOW })
  const members = usePoll(() => call<{ members: Member[] }>('GET', `${spacePath(spaceId)}/members`), 5000, [spaceId])
  const me = members.value?.members.find((m) => (m as Member & { self?: boolean }).self)?.identity ?? account
  const names = useMemo(() => new Map((members.value?.members ?? []).map((m) => [m.identity, m.name || m.identity.slice(0, 6)])), [members.value])
  const messages = useMemo(() => [...((live.rows ?? []) as unknown as Message[])].sort((a, b) => Number(a._ver?.id ?? 0) - Number(b._ver?.id ?? 0)), [live.rows])
  const counters = useChatCounters(spaceId)
  const [text, setText] = useState('')
  const [replyTo, setReplyTo] = useState<Message | undefined>(undefined)
  const [mentionQuery, setMentionQuery] = useState<string | undefined>(undefined)
  const [picked, setPicked] = useState(0)
  const [uploads, setUploads] = useState<Array<{ name: string; fraction: number }>>([])
  const [error, setError] = useState<string | undefined>(undefined)
  const input = useRef<HTMLTextAreaElement>(null)
  const list = useRef<HTMLOListElement>(null)
  const M = root ? `${objectPath(spaceId, root)}/chat` : ''

  // Read marks follow the screen: the newest unread message that stays fully visible for a second is marked read, and everything above it with it.
  useEffect(() => {
    if (!root || !list.current) return
    const timers = new Map<string, number>()
    const observer = new IntersectionObserver(
      (entries) => {
        for (const e of entries) {
          const id = (e.target as HTMLElement).dataset.id!
          if (e.isIntersecting && e.intersectionRatio >= 0.99 && (e.target as HTMLElement).dataset.unread === 'true') {
            if (!timers.has(id)) {
              timers.set(
                id,
                window.setTimeout(() => {
                  timers.delete(id)
                  void call('POST', `${M}/messages/${encodeURIComponent(id)}/read`).catch((err: unknown) => console.warn('svc app: read mark', err))
                }, READ_AFTER_MS),
              )
            }
          } else if (timers.has(id)) {
            clearTimeout(timers.get(id))
            timers.delete(id)
          }
        }
      },
      { root: list.current, threshold: [0.99] },
    )
    for (const el of list.current.querySelectorAll('[data-unread="true"]')) observer.observe(el)
    return () => {
      observer.disconnect()
      for (const t of timers.values()) clearTimeout(t)
    }
  }, [root, messages])

  // Keep the newest message in view as messages arrive.
  useEffect(() => {
    const el = list.current
    if (el) el.scrollTop = el.scrollHeight
  }, [messages.length])

  const candidates = useMemo(() => {
    if (mentionQuery === undefined) return []
    const q = mentionQuery.toLowerCase()
    return (members.value?.members ?? []).filter((m) => m.status === 'active' && m.identity !== me && (m.name || m.identity).toLowerCase().startsWith(q)).slice(0, 6)
  }, [mentionQuery, members.value])

  const onText = (value: string, caret: number) => {
    setText(value)
    const m = /(^|\s)@([^\s@]*)$/.exec(value.slice(0, caret))
    setMentionQuery(m ? m[2] : undefined)
    setPicked(0)
  }
  const pickMention = (m: Member) => {
    const el = input.current!
    const caret = el.selectionStart
    const before = text.slice(0, caret).replace(/@([^\s@]*)$/, '')
    const link = `[@${m.name || m.identity.slice(0, 6)}](svc://m/${spaceId}/${m.identity}) `
    const next = before + link + text.slice(caret)
    // Set at once, not on the next frame: a key typed right after the pick lands after the link.
    el.value = next
    el.setSelectionRange(before.length + link.length, before.length + link.length)
    setText(next)
    setMentionQuery(undefined)
  }
  const send = async (e?: Event) => {
    e?.preventDefault()
    if (!text.trim() || !M) return
    try {
      await call('POST', `${M}/messages`, { text, ...(replyTo ? { replyToMessageId: replyTo.id } : {}) })
      setText('')
      setReplyTo(undefined)
    } catch (err) {
      setError(describe(err))
    }
  }
  const attach = async (files: FileList | null) => {
    if (!files || !root) return
    try {
      const attachments: Record<string, { type: string; link: string }> = {}
      let n = 0
      for (const file of Array.from(files)) {
        const slot = { name: file.name, fraction: 0 }
        setUploads((u) => [...u, slot])
        const made = await uploadFile(spaceId, root, file, (f) => {
          slot.fraction = f
          setUploads((u) => [...u])
        })
        setUploads((u) => u.filter((x) => x !== slot))
        attachments[`a${n++}`] = { type: file.type.startsWith('image/') ? 'image' : 'link', link: made.uri || `svc://f/${spaceId}/${made.fileId}` }
      }
      await call('POST', `${M}/messages`, { text: text || undefined, attachments })
      setText('')
    } catch (err) {
      setError(describe(err))
    }
  }
  const react = (m: Message, emoji: string) =>
    void call('POST', `${M}/messages/${encodeURIComponent(m.id)}/reactions/${encodeURIComponent(emoji)}`).catch((err: unknown) => setError(describe(err)))

  if (chat.error) {
    return (
      <p class="error" role="alert">
        {chat.error}
      </p>
    )
  }
  // Nothing to send to until the chat's root is known (the catalog installs or adopts it).
  if (!root) return <p aria-busy="true">Opening the chat…</p>
  return (
    <section class="chat" aria-labelledby="chat-title">
      <header class="row">
        <h2 id="chat-title">General chat</h2>
        <span class="badge" data-testid="unread-badge" aria-label={`${counters.unread} unread`} hidden={counters.unread === 0}>
          {counters.unread} unread
        </span>
        <span class="badge badge-mention" data-testid="mention-badge" aria-label={`${counters.mentions} mentions`} hidden={counters.mentions === 0}>
          @{counters.mentions}
        </span>
        {counters.unread > 0 && M && <button onClick={() => void call('POST', `${M}/read-all`)}>Mark all read</button>}
      </header>
      <ol class="messages" ref={list} aria-live="polite" tabIndex={0} aria-label="Messages">
        {messages.map((m) => {
          const reply = m.replyToMessageId ? messages.find((x) => x.id === m.replyToMessageId) : undefined
          return (
            <li key={m.id} class={`message${m.creator === me ? ' own' : ''}${m.unreadMention ? ' mentioned' : ''}`} data-id={m.id} data-unread={m.unread ? 'true' : 'false'}>
              <div class="meta">
                <strong>{names.get(m.creator) ?? m.creator.slice(0, 6)}</strong> <time>{instant(m.createdAt)?.toLocaleTimeString() ?? ''}</time>
                {m.unread && <span class="pill">new</span>}
              </div>
              {m.replyToMessageId && <div class="reply-to muted">↪ {reply ? (reply.text ?? '').slice(0, 80) : 'an earlier message'}</div>}
              {m.text && <MessageText text={m.text} names={names} />}
              {Object.entries(m.attachments ?? {}).map(([k, a]) => {
                const fileId = a.link.split('/').pop() ?? ''
                return (
                  <div key={k} class="attachment">
                    {a.type === 'image' ? <FileImage spaceId={spaceId} fileId={fileId} alt="attached image" /> : <span>📎 {a.link}</span>}
                  </div>
                )
              })}
              <div class="row compact reactions">
                {Object.entries(m.reactions ?? {}).map(([emoji, who]) => (
                  <button key={emoji} aria-pressed={account in who} onClick={() => react(m, emoji)} disabled={readOnly}>
                    {emoji} {Object.keys(who).length}
                  </button>
                ))}
                {!readOnly && (
                  <details class="react-menu">
                    <summary aria-label="Add a reaction">☺+</summary>
                    {REACTIONS.map((emoji) => (
                      <button key={emoji} aria-label={`React ${emoji}`} onClick={() => react(m, emoji)}>
                        {emoji}
                      </button>
                    ))}
                  </details>
                )}
                {!readOnly && (
                  <button
                    class="link"
                    onClick={() => {
                      setReplyTo(m)
                      input.current?.focus()
                    }}
                  >
                    Reply
                  </button>
                )}
              </div>
            </li>
          )
        })}
      </ol>
      <Uploads uploads={uploads} />
      {!readOnly && (
        <form class="composer" onSubmit={(e) => void send(e)}>
          {replyTo && (
            <div class="row compact">
              <span class="muted">Replying to: {(replyTo.text ?? '').slice(0, 60)}</span>
              <button type="button" class="link" onClick={() => setReplyTo(undefined)}>
                Cancel reply
              </button>
            </div>
          )}
          <label class="sr-only" for="composer">
            Message
          </label>
          <textarea
            id="composer"
            ref={input}
            rows={2}
            value={text}
            placeholder="Write a message. @ mentions someone."
            aria-autocomplete="list"
            aria-controls={candidates.length > 0 ? 'mention-list' : undefined}
            onInput={(e) => onText((e.target as HTMLTextAreaElement).value, (e.target as HTMLTextAreaElement).selectionStart)}
            onKeyDown={(e) => {
              if (candidates.length > 0 && (e.key === 'ArrowDown' || e.key === 'ArrowUp')) {
                e.preventDefault()
                setPicked((p) => (p + (e.key === 'ArrowDown' ? 1 : candidates.length - 1)) % candidates.length)
              } else if (candidates.length > 0 && (e.key === 'Enter' || e.key === 'Tab')) {
                e.preventDefault()
                pickMention(candidates[picked])
              } else if (e.key === 'Escape') setMentionQuery(undefined)
              else if (e.key === 'Enter' && !e.shiftKey) void send(e)
            }}
          />
          {candidates.length > 0 && (
            <ul id="mention-list" class="mention-list" role="listbox" aria-label="Mention a member">
              {candidates.map((m, i) => (
                <li
                  key={m.identity}
                  role="option"
                  aria-selected={i === picked}
                  onMouseDown={(e) => {
                    e.preventDefault()
                    pickMention(m)
                  }}
                >
                  {m.name || m.identity.slice(0, 6)}
                </li>
              ))}
            </ul>
          )}
          <div class="row compact">
            <button type="submit" class="primary" disabled={!text.trim()}>
              Send
            </button>
            <label class="button">
              Attach <input type="file" class="sr-only" multiple onChange={(e) => void attach((e.target as HTMLInputElement).files)} />
            </label>
          </div>
        </form>
      )}
      {(error ?? live.error) && (
        <p class="error" role="alert">
          {error ?? live.error}
        </p>
      )}
    </section>
  )
}
