import { useState } from 'preact/hooks'
import { call, describe, spacePath } from '../api.ts'
import { useLoad, usePoll } from '../hooks.ts'
import { shortId } from './app.tsx'
import type { SpaceRow } from './sidebar.tsx'

interface Member {
  identity: string
  role: string
  status: string
  name: string
  self: boolean
  request?: { recordId: string }
}
interface Invite {
  recordId: string
  permission: string
  inviteToken?: string
}

const ROLES = ['reader', 'writer', 'admin']

function Copyable({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false)
  return (
    <div class="copyable">
      <label>
        {label}
        <input readOnly value={value} onFocus={(e) => (e.target as HTMLInputElement).select()} data-testid="token" />
      </label>
      <button
        onClick={() =>
          void navigator.clipboard?.writeText(value).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  )
}

/** Members, join requests, invites and the guest link of one space. */
export function MembersScreen({ space }: { space: SpaceRow }) {
  const S = spacePath(space.id)
  const manager = space.ownRole === 'owner' || space.ownRole === 'admin'
  const members = usePoll(() => call<{ members: Member[] }>('GET', `${S}/members`), 1500, [space.id])
  const invites = useLoad(() => (manager ? call<{ invites: Invite[] }>('GET', `${S}/invites`) : Promise.resolve({ invites: [] })), [space.id, manager])
  const [token, setToken] = useState<string | undefined>(undefined)
  const [guest, setGuest] = useState<string | undefined>(undefined)
  const [permission, setPermission] = useState('writer')
  const [error, setError] = useState<string | undefined>(undefined)

  const act = async (what: () => Promise<unknown>) => {
    setError(undefined)
    try {
      await what()
      invites.reload()
    } catch (err) {
      setError(describe(err))
    }
  }
  const list = members.value?.members ?? []
  const active = list.filter((m) => m.status === 'active')
  const pending = list.filter((m) => m.status === 'pending')

  return (
    <div class="members">
      <section aria-labelledby="members-title">
        <h2 id="members-title">Members</h2>
        <table class="grid">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              {manager && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {active.map((m) => (
              <tr key={m.identity} data-member={m.name || m.identity}>
                <td>
                  {m.name || shortId(m.identity)}
                  {m.self && <span class="muted"> (you)</span>}
                </td>
                <td>
                  {manager && !m.self && m.role !== 'owner' ? (
                    <select
                      aria-label={`Role of ${m.name || m.identity}`}
                      value={m.role}
                      onChange={(e) => void act(() => call('PATCH', `${S}/members/${encodeURIComponent(m.identity)}`, { role: (e.target as HTMLSelectElement).value }))}
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  ) : (
                    m.role
                  )}
                </td>
                {manager && (
                  <td>
                    {!m.self && m.role !== 'owner' && (
                      <button
                        onClick={() =>
                          confirm(`Remove ${m.name || m.identity}? They keep what they had, and see nothing written after.`) &&
                          void act(() => call('DELETE', `${S}/members/${encodeURIComponent(m.identity)}`))
                        }
                      >
                        Remove
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      {manager && pending.length > 0 && (
        <section aria-labelledby="requests-title" class="card">
          <h2 id="requests-title">Join requests</h2>
          <ul class="plain">
            {pending.map((m) => (
              <li key={m.identity} class="row" data-request={m.name || m.identity}>
                <span>{m.name || shortId(m.identity)} asks to join</span>
                <button class="primary" onClick={() => void act(() => call('POST', `${S}/acl/accept`, { identity: m.identity }))}>
                  Accept
                </button>
                <button onClick={() => void act(() => call('POST', `${S}/acl/decline`, { identity: m.identity }))}>Decline</button>
              </li>
            ))}
          </ul>
        </section>
      )}

      {manager && (
        <section aria-labelledby="invites-title" class="card">
          <h2 id="invites-title">Invites</h2>
          <div class="row">
            <label>
              Permission{' '}
              <select aria-label="Permission" value={permission} onChange={(e) => setPermission((e.target as HTMLSelectElement).value)}>
                <option value="reader">reader</option>
                <option value="writer">writer</option>
              </select>
            </label>
            <button class="primary" onClick={() => void act(async () => setToken((await call<{ inviteToken: string }>('POST', `${S}/invites`, { permission })).inviteToken))}>
              Create invite
            </button>
            <button
              onClick={() =>
                void act(async () => {
                  await call('DELETE', `${S}/invites`)
                  setToken(undefined)
                })
              }
            >
              Revoke all invites
            </button>
          </div>
          {token && <Copyable label="Invite token: send it to the person you invite" value={token} />}
          <ul class="plain">
            {(invites.value?.invites ?? []).map((i) => (
              <li key={i.recordId} class="row">
                <span>Pending invite · {i.permission}</span>
                <button onClick={() => void act(() => call('DELETE', `${S}/invites/${encodeURIComponent(i.recordId)}`))}>Revoke</button>
              </li>
            ))}
          </ul>
          {space.ownRole === 'owner' && (
            <div class="row">
              <button onClick={() => void act(async () => setGuest((await call<{ inviteToken: string }>('POST', `${S}/guest-key`)).inviteToken))}>Guest link</button>
              <button
                onClick={() =>
                  void act(async () => {
                    await call('DELETE', `${S}/guest-key`)
                    setGuest(undefined)
                  })
                }
              >
                Revoke guest access
              </button>
            </div>
          )}
          {guest && <Copyable label="Guest token: read-only access for anyone who has it" value={guest} />}
        </section>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  )
}
