/**
 * The enumeration a reply may cost (docs/protocol.md, "Limits": maxStepWork, maxExchangeWork),
 * so a step of a few kilobytes cannot make its receiver walk the space thousands of times.
 * Work is charged before it is done; the first charge of a budget always passes, so every
 * step still makes progress.
 */
export class WorkBudget {
  used = 0
  /** Charges refused: items left out of a reply. */
  refused = 0

  constructor(private readonly limit: number) {}

  take(units: number): boolean {
    if (this.used > 0 && this.used + units > this.limit) {
      this.refused++
      return false
    }
    this.used += units
    return true
  }
}
