import diff from 'fast-diff'

/**
 * One block's text between the textarea and the daemon. The page sends the whole text it
 * shows together with the text it was typed against (`textBase`), so the daemon merges the
 * keystrokes onto its text now (sync/modules/editor/text-merge.ts) and keeps what others typed
 * meanwhile. One write is in flight at a time; keystrokes made meanwhile go in the next one.
 * A text arriving from the live query replaces what is shown only when nothing typed here is
 * unsent and it is at least as new as the last write acknowledged, so the page never shows a
 * text older than its own keystrokes; the caret is carried across the change.
 */
export class TextSync {
  private lastSent: string
  private local: string
  private inFlight = false
  private written = 0
  private latest: { text: string; version: number } | undefined

  constructor(
    initial: string,
    private readonly send: (text: string, base: string) => Promise<number>,
    private readonly show: (text: string, caret: (index: number) => number) => void,
    private readonly fail: (err: unknown) => void,
    /** Called when every keystroke made here is written: a caret published now is placed in the text the daemon holds. */
    private readonly settled: () => void = () => undefined,
  ) {
    this.lastSent = initial
    this.local = initial
  }

  get text(): string {
    return this.local
  }

  /** Keystrokes made here that the daemon has not acknowledged yet. */
  get pending(): boolean {
    return this.inFlight || this.local !== this.lastSent
  }

  /** The textarea's value after a keystroke. */
  input(value: string): void {
    this.local = value
    void this.pump()
  }

  /** The block's text as the daemon now holds it, from a live-query frame of `version`. */
  remote(text: string, version: number): void {
    this.latest = { text, version }
    this.adopt()
  }

  private async pump(): Promise<void> {
    if (this.inFlight || this.local === this.lastSent) return
    const text = this.local
    const base = this.lastSent
    this.inFlight = true
    this.lastSent = text
    try {
      this.written = Math.max(this.written, await this.send(text, base))
    } catch (err) {
      // Not written: the next keystroke (or the retry below) sends it again against the same base.
      this.lastSent = base
      this.fail(err)
      this.inFlight = false
      setTimeout(() => void this.pump(), 1000)
      return
    }
    this.inFlight = false
    if (this.local !== this.lastSent) void this.pump()
    else {
      this.adopt()
      this.settled()
    }
  }

  private adopt(): void {
    const latest = this.latest
    if (!latest || this.inFlight || this.local !== this.lastSent || latest.version < this.written) return
    this.latest = undefined
    if (latest.text === this.local) return
    const caret = caretMap(this.local, latest.text)
    this.local = this.lastSent = latest.text
    this.show(latest.text, caret)
  }
}

/** Where each index of `from` lands in `to`: a caret stays beside the character it was beside. */
export function caretMap(from: string, to: string): (index: number) => number {
  const parts = diff(from, to)
  return (index) => {
    let a = 0
    let b = 0
    for (const [op, text] of parts) {
      if (op === diff.EQUAL) {
        if (index <= a + text.length) return b + (index - a)
        a += text.length
        b += text.length
      } else if (op === diff.DELETE) {
        if (index <= a + text.length) return b
        a += text.length
      } else b += text.length
    }
    return b
  }
}
