import { errField, silentLogger, type Logger } from './log.ts'

/**
 * A typed event emitter: one listener set per event name, each event with its own payload
 * type, so a misspelt event or a wrong payload is a type error. Listeners run synchronously in
 * registration order. One that throws does not stop the others nor the emitter (an event
 * reports something already done, such as a committed write): its error goes to `log` at error
 * (a listener that throws is a bug), with the event's name.
 */
export class Emitter<Events extends { [K in keyof Events]: unknown }> {
  private readonly sets = new Map<keyof Events, Set<(e: never) => void>>()

  constructor(private readonly log: Logger = silentLogger) {}

  /** Adds a listener; the returned function removes it. */
  on<K extends keyof Events>(name: K, fn: (e: Events[K]) => void): () => void {
    let set = this.sets.get(name)
    if (!set) this.sets.set(name, (set = new Set()))
    const f = fn as (e: never) => void
    set.add(f)
    return () => void set.delete(f)
  }

  emit<K extends keyof Events>(name: K, e: Events[K]): void {
    const set = this.sets.get(name)
    if (!set || set.size === 0) return
    // A copy: a listener may remove itself (or another) while the event is delivered.
    for (const fn of set.size === 1 ? set : [...set]) {
      try {
        ;(fn as (e: Events[K]) => void)(e)
      } catch (err) {
        this.log.error('event listener failed', { event: String(name), err: errField(err) })
      }
    }
  }

  /** How many listen (an emitter may skip building a payload nobody reads; tests count leaks). */
  count(name: keyof Events): number {
    return this.sets.get(name)?.size ?? 0
  }
}
