import { useState } from 'preact/hooks'
import { api, describe, ok } from '../api.ts'
import { go } from '../router.ts'

export const TOUR_KEY = 'svc.tour'

/**
 * No account yet: create one (its recovery phrase is shown once, and the user confirms saving
 * it before going on) or restore one from a phrase. Then a first space and a short tour of it.
 */
export function FirstRun({ onDone }: { onDone: () => void }) {
  const [mode, setMode] = useState<'choose' | 'restore' | 'phrase'>('choose')
  const [phrase, setPhrase] = useState('')
  const [saved, setSaved] = useState(false)
  const [name, setName] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)

  const run = async (what: () => Promise<void>) => {
    setBusy(true)
    setError(undefined)
    try {
      await what()
    } catch (err) {
      setError(describe(err))
    } finally {
      setBusy(false)
    }
  }
  const create = () =>
    run(async () => {
      const made = await ok(api.POST('/v1/auth', { body: {} }))
      setPhrase(made.mnemonic ?? '')
      setMode('phrase')
    })
  const restore = (e: Event) => {
    e.preventDefault()
    void run(async () => {
      await ok(api.POST('/v1/auth', { body: { mnemonic: phrase.trim().split(/\s+/).join(' ') } }))
      if (name.trim()) await ok(api.PUT('/v1/account/metadata', { body: { name: name.trim() } }))
      onDone()
    })
  }
  const start = () =>
    run(async () => {
      if (name.trim()) await ok(api.PUT('/v1/account/metadata', { body: { name: name.trim() } }))
      const space = await ok(api.POST('/v1/spaces', { body: { name: 'My space' } }))
      sessionStorage.setItem(TOUR_KEY, '1')
      go({ spaceId: space.id, tab: 'tables' })
      setPhrase('')
      onDone()
    })

  return (
    <main class="center first-run">
      <h1>Welcome to svc</h1>
      {mode === 'choose' && (
        <div class="stack">
          <p>Your data stays on this device, syncs to your other devices and to the people you share with, encrypted end to end.</p>
          <button class="primary" disabled={busy} onClick={() => void create()}>
            Create an account
          </button>
          <button disabled={busy} onClick={() => setMode('restore')}>
            Restore from a recovery phrase
          </button>
        </div>
      )}
      {mode === 'phrase' && (
        <div class="stack">
          <h2>Your recovery phrase</h2>
          <p>
            It is shown <strong>once</strong> and never stored. Anyone who has it can open your account; without it, a lost device means a lost account. Write it down.
          </p>
          <p class="phrase" data-testid="mnemonic">
            {phrase}
          </p>
          <label>
            Your name, as the people you share with will see it
            <input value={name} autocomplete="name" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </label>
          <label class="check">
            <input type="checkbox" checked={saved} onChange={(e) => setSaved((e.target as HTMLInputElement).checked)} />I have saved my recovery phrase
          </label>
          <button class="primary" disabled={!saved || busy} onClick={() => void start()}>
            Continue
          </button>
        </div>
      )}
      {mode === 'restore' && (
        <form class="stack" onSubmit={restore}>
          <label for="phrase">Recovery phrase (12 or 24 words)</label>
          <textarea id="phrase" rows={3} value={phrase} onInput={(e) => setPhrase((e.target as HTMLTextAreaElement).value)} autocomplete="off" />
          <label>
            Your name, as the people you share with will see it
            <input value={name} autocomplete="name" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </label>
          <button class="primary" type="submit" disabled={busy || phrase.trim().split(/\s+/).length < 12}>
            Restore
          </button>
          <button type="button" onClick={() => setMode('choose')}>
            Back
          </button>
        </form>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </main>
  )
}
