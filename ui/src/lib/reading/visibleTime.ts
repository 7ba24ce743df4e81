// Time on task: only the time the reading screen was visible counts (a hidden window, a locked
// screen or another application in front pauses it).

export class VisibleTime {
  private accumulatedMs = 0
  private since: number | null = null

  constructor(
    private readonly now: () => number = () => performance.now(),
    /** Seconds already recorded for this rating in earlier sessions. */
    initialSeconds = 0,
  ) {
    this.accumulatedMs = initialSeconds * 1000
  }

  /** Starts or resumes counting; calling it while counting changes nothing. */
  resume(): void {
    if (this.since === null) this.since = this.now()
  }

  pause(): void {
    if (this.since === null) return
    this.accumulatedMs += this.now() - this.since
    this.since = null
  }

  get running(): boolean {
    return this.since !== null
  }

  get seconds(): number {
    const live = this.since === null ? 0 : this.now() - this.since
    return (this.accumulatedMs + live) / 1000
  }
}

/** "4:07" or "1:02:09". */
export function clockLabel(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds))
  const [h, m, r] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60]
  const pad = (v: number) => v.toString().padStart(2, '0')
  return h > 0 ? `${h}:${pad(m)}:${pad(r)}` : `${m}:${pad(r)}`
}
