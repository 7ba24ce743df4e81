import { describe, expect, it } from 'vitest'
import { History, diffByUid } from './history'

describe('History', () => {
  it('undoes and redoes in order, and a new edit clears what could be redone', () => {
    const h = new History(0)
    h.record(1)
    h.record(2)
    expect(h.undo()).toBe(1)
    expect(h.undo()).toBe(0)
    expect(h.undo()).toBeNull()
    expect(h.redo()).toBe(1)
    h.record(5)
    expect(h.canRedo).toBe(false)
    expect(h.redo()).toBeNull()
    expect(h.undo()).toBe(1)
  })

  it('collapses consecutive edits of one group into a single step', () => {
    const h = new History('')
    for (const text of ['t', 'th', 'the']) h.record(text, 'comment')
    h.record('the!', 'other')
    expect(h.undo()).toBe('the')
    expect(h.undo()).toBe('')
  })

  it('starts a new step when the same group is edited again after an undo', () => {
    const h = new History('')
    h.record('a', 'comment')
    h.undo()
    h.record('b', 'comment')
    h.record('bc', 'comment')
    expect(h.undo()).toBe('')
  })

  it('forgets the oldest steps beyond its limit', () => {
    const h = new History(0, { limit: 3 })
    for (let i = 1; i <= 5; i++) h.record(i)
    expect([h.undo(), h.undo(), h.undo(), h.undo()]).toEqual([4, 3, 2, null])
  })

  it('replace changes the present without an undo step', () => {
    const h = new History({ id: null as number | null })
    h.record({ id: null })
    h.replace({ id: 7 })
    expect(h.current).toEqual({ id: 7 })
    expect(h.undo()).toEqual({ id: null })
  })
})

describe('diffByUid', () => {
  it('finds added, removed and changed items by uid', () => {
    const before = [
      { uid: 'a', severity: 1 },
      { uid: 'b', severity: 2 },
    ]
    const after = [
      { uid: 'b', severity: 3 },
      { uid: 'c', severity: 1 },
    ]
    const d = diffByUid(before, after, (x, y) => x.severity === y.severity)
    expect(d.added.map((l) => l.uid)).toEqual(['c'])
    expect(d.removed.map((l) => l.uid)).toEqual(['a'])
    expect(d.changed).toEqual([{ uid: 'b', severity: 3 }])
  })
})
