// Undo/redo over snapshots of what the rater edits (scores, comment, labels). Snapshots, not
// inverse commands: restoring one and writing the difference through the save queue keeps undo
// exactly as durable as any other edit.

export interface HistoryOptions {
  /** Oldest snapshots are forgotten beyond this many. */
  limit?: number
}

export class History<T> {
  private past: T[] = []
  private future: T[] = []
  private lastGroup: string | null = null
  private readonly limit: number

  constructor(
    private present: T,
    options: HistoryOptions = {},
  ) {
    this.limit = options.limit ?? 200
  }

  get current(): T {
    return this.present
  }

  get canUndo(): boolean {
    return this.past.length > 0
  }

  get canRedo(): boolean {
    return this.future.length > 0
  }

  /**
   * Records `next` as the new present. Consecutive records with the same `group` (keystrokes in
   * one comment box) collapse into one undo step.
   */
  record(next: T, group: string | null = null): void {
    if (group === null || group !== this.lastGroup) {
      this.past.push(this.present)
      if (this.past.length > this.limit) this.past.shift()
    }
    this.present = next
    this.future = []
    this.lastGroup = group
  }

  /** Replaces the present without an undo step (e.g. a server id arriving for a new label). */
  replace(next: T): void {
    this.present = next
  }

  undo(): T | null {
    const previous = this.past.pop()
    if (previous === undefined) return null
    this.future.push(this.present)
    this.present = previous
    this.lastGroup = null
    return previous
  }

  redo(): T | null {
    const next = this.future.pop()
    if (next === undefined) return null
    this.past.push(this.present)
    this.present = next
    this.lastGroup = null
    return next
  }
}

/** Labels by a stable client-side id; what changed between two snapshots of them. */
export interface Keyed {
  uid: string
}

export function diffByUid<L extends Keyed>(
  before: readonly L[],
  after: readonly L[],
  same: (a: L, b: L) => boolean,
): { added: L[]; removed: L[]; changed: L[] } {
  const old = new Map(before.map((l) => [l.uid, l]))
  const now = new Map(after.map((l) => [l.uid, l]))
  return {
    added: after.filter((l) => !old.has(l.uid)),
    removed: before.filter((l) => !now.has(l.uid)),
    changed: after.filter((l) => old.has(l.uid) && !same(old.get(l.uid)!, l)),
  }
}
