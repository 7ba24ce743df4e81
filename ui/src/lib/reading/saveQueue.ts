// Every edit on the reading screen goes through one queue: edits are written in the order they
// were made, a burst of edits to the same thing (typing a comment, stepping a score) is written
// once after a short pause, and a failed write stays at the head of the queue and is retried until
// it succeeds. Nothing is dropped silently: the screen shows `retrying` until the backend
// acknowledges, and an edit the backend refuses for good (a submitted rating) is reported as
// `rejected` and stays on screen until the next acknowledged write.

/** What the rater sees: all acknowledged, edits waiting, a write under way, or a failed write. */
export type SaveState =
  | { kind: 'saved' }
  | { kind: 'unsaved' }
  | { kind: 'saving' }
  | { kind: 'retrying'; attempt: number; message: string }
  | { kind: 'rejected'; message: string }

export interface SaveTask {
  /** Edits with the same key replace each other while waiting: only the newest is written. */
  key: string
  run: () => Promise<void>
}

export interface SaveQueueOptions {
  /** Quiet time after the last edit before it is written (the issue allows at most 300 ms). */
  debounceMs?: number
  /** Waits before each retry; the last is repeated for as long as the failure lasts. */
  retryDelaysMs?: readonly number[]
  onState?: (state: SaveState) => void
  describeError?: (error: unknown) => string
  /** Errors that no retry can fix (the backend refused the edit itself): reported, not retried. */
  isPermanent?: (error: unknown) => boolean
}

export const DEFAULT_DEBOUNCE_MS = 250
export const DEFAULT_RETRY_DELAYS_MS = [500, 1000, 2000, 4000] as const

export class SaveQueue {
  private pending: SaveTask[] = []
  private running: SaveTask | null = null
  private timer: ReturnType<typeof setTimeout> | null = null
  private failures = 0
  private lastError = ''
  private rejection: string | null = null
  private idleWaiters: (() => void)[] = []
  private readonly debounceMs: number
  private readonly retryDelaysMs: readonly number[]
  private readonly onState: (state: SaveState) => void
  private readonly describeError: (error: unknown) => string
  private readonly isPermanent: (error: unknown) => boolean
  state: SaveState = { kind: 'saved' }

  constructor(options: SaveQueueOptions = {}) {
    this.debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS
    this.onState = options.onState ?? (() => {})
    this.describeError = options.describeError ?? ((e) => (e instanceof Error ? e.message : String(e)))
    this.isPermanent = options.isPermanent ?? (() => false)
  }

  /** Queues an edit; written after `debounceMs` of quiet unless `immediate`. */
  enqueue(task: SaveTask, immediate = false): void {
    const waiting = this.pending.findIndex((t) => t.key === task.key)
    if (waiting >= 0) this.pending[waiting] = task
    else this.pending.push(task)
    if (this.failures > 0) return // the retry timer is already set; the new edit follows it
    this.publish()
    this.schedule(immediate ? 0 : this.debounceMs)
  }

  /** Writes everything waiting now and resolves once the queue is empty (e.g. before leaving). */
  flush(): Promise<void> {
    if (this.pending.length === 0 && !this.running) return Promise.resolve()
    const done = new Promise<void>((resolve) => this.idleWaiters.push(resolve))
    if (!this.running && this.failures === 0) this.schedule(0)
    return done
  }

  /** Whether an edit is not yet acknowledged by the backend. */
  get dirty(): boolean {
    return this.pending.length > 0 || this.running !== null
  }

  private schedule(ms: number) {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timer = null
      void this.drain()
    }, ms)
  }

  private async drain() {
    if (this.running) return
    while (this.pending.length > 0) {
      const task = this.pending.shift()!
      this.running = task
      this.publish()
      try {
        await task.run()
        this.failures = 0
        this.rejection = null
      } catch (error) {
        if (this.isPermanent(error)) {
          this.rejection = this.describeError(error)
          this.failures = 0
          this.running = null
          continue
        }
        // Put it back at the head unless a newer edit with the same key replaced it meanwhile.
        if (!this.pending.some((t) => t.key === task.key)) this.pending.unshift(task)
        else {
          const newer = this.pending.findIndex((t) => t.key === task.key)
          this.pending.unshift(...this.pending.splice(newer, 1))
        }
        this.failures += 1
        this.lastError = this.describeError(error)
        this.running = null
        this.publish()
        const delays = this.retryDelaysMs
        this.schedule(delays[Math.min(this.failures - 1, delays.length - 1)] ?? 1000)
        return
      }
      this.running = null
    }
    this.publish()
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (const resolve of waiters) resolve()
  }

  private publish() {
    let next: SaveState
    if (this.rejection !== null && this.pending.length === 0 && !this.running)
      next = { kind: 'rejected', message: this.rejection }
    else if (this.failures > 0) next = { kind: 'retrying', attempt: this.failures, message: this.lastError }
    else if (this.running) next = { kind: 'saving' }
    else if (this.pending.length > 0) next = { kind: 'unsaved' }
    else next = { kind: 'saved' }
    this.state = next
    this.onState(next)
  }
}
