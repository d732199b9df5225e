/** Samples a growing counter once a second and answers its rate over the last ten samples. */
export class RateMeter {
  private readonly samples: Array<{ at: number; value: number }> = []

  constructor(private readonly now: () => number) {}

  sample(value: number): void {
    this.samples.push({ at: this.now(), value })
    if (this.samples.length > 11) this.samples.shift()
  }

  perSecond(): number {
    if (this.samples.length < 2) return 0
    const a = this.samples[0]
    const b = this.samples[this.samples.length - 1]
    return b.at > a.at ? Math.round(((b.value - a.value) * 1000) / (b.at - a.at)) : 0
  }
}
