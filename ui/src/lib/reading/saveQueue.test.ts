import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SaveQueue, type SaveState } from './saveQueue'

beforeEach(() => vi.useFakeTimers())
afterEach(() => vi.useRealTimers())

function recorder() {
  const states: SaveState['kind'][] = []
  const written: string[] = []
  return { states, written, onState: (s: SaveState) => states.push(s.kind) }
}

describe('SaveQueue', () => {
  it('writes a burst of edits to one key once, with the newest value, after the quiet time', async () => {
    const r = recorder()
    const queue = new SaveQueue({ debounceMs: 250, onState: r.onState })
    for (const value of ['a', 'ab', 'abc']) {
      queue.enqueue({ key: 'comment', run: async () => void r.written.push(value) })
      await vi.advanceTimersByTimeAsync(100)
    }
    expect(r.written).toEqual([])
    expect(queue.state.kind).toBe('unsaved')
    await vi.advanceTimersByTimeAsync(250)
    expect(r.written).toEqual(['abc'])
    expect(queue.state.kind).toBe('saved')
    expect(queue.dirty).toBe(false)
  })

  it('keeps the order in which different things were first edited', async () => {
    const r = recorder()
    const queue = new SaveQueue({ debounceMs: 50 })
    queue.enqueue({ key: 'label-add', run: async () => void r.written.push('add') })
    queue.enqueue({ key: 'rating', run: async () => void r.written.push('rating 1') })
    queue.enqueue({ key: 'label-update', run: async () => void r.written.push('update') })
    queue.enqueue({ key: 'rating', run: async () => void r.written.push('rating 2') })
    await vi.advanceTimersByTimeAsync(50)
    expect(r.written).toEqual(['add', 'rating 2', 'update'])
  })

  it('retries a failed write with growing waits until it succeeds, and never drops it', async () => {
    const r = recorder()
    const queue = new SaveQueue({ debounceMs: 10, retryDelaysMs: [100, 300], onState: r.onState })
    let failuresLeft = 3
    const attempts: number[] = []
    queue.enqueue({
      key: 'rating',
      run: async () => {
        attempts.push(Date.now())
        if (failuresLeft-- > 0) throw new Error('database is locked')
        r.written.push('ok')
      },
    })
    await vi.advanceTimersByTimeAsync(10)
    expect(queue.state).toEqual({ kind: 'retrying', attempt: 1, message: 'database is locked' })
    await vi.advanceTimersByTimeAsync(100)
    expect(queue.state).toMatchObject({ kind: 'retrying', attempt: 2 })
    await vi.advanceTimersByTimeAsync(300)
    expect(queue.state).toMatchObject({ kind: 'retrying', attempt: 3 })
    expect(r.written).toEqual([])
    await vi.advanceTimersByTimeAsync(300)
    expect(r.written).toEqual(['ok'])
    expect(queue.state.kind).toBe('saved')
    // Waits between attempts: 100, then 300 repeated.
    expect(attempts.slice(1).map((t, i) => t - attempts[i])).toEqual([100, 300, 300])
  })

  it('retries the newest edit of a key that changed while its write was failing', async () => {
    const written: string[] = []
    const queue = new SaveQueue({ debounceMs: 10, retryDelaysMs: [100] })
    let fail = true
    queue.enqueue({
      key: 'rating',
      run: async () => {
        if (fail) throw new Error('disk full')
        written.push('old')
      },
    })
    await vi.advanceTimersByTimeAsync(10)
    expect(queue.state.kind).toBe('retrying')
    fail = false
    queue.enqueue({ key: 'rating', run: async () => void written.push('new') })
    await vi.advanceTimersByTimeAsync(100)
    expect(written).toEqual(['new'])
  })

  it('shows saving while a write is under way and resolves flush once everything is written', async () => {
    const r = recorder()
    const queue = new SaveQueue({ debounceMs: 250, onState: r.onState })
    let release: () => void = () => {}
    queue.enqueue({ key: 'k', run: () => new Promise<void>((resolve) => (release = resolve)) })
    let flushed = false
    const flushing = queue.flush().then(() => (flushed = true))
    await vi.advanceTimersByTimeAsync(0)
    expect(queue.state.kind).toBe('saving')
    expect(flushed).toBe(false)
    release()
    await flushing
    expect(flushed).toBe(true)
    expect(r.states).toEqual(['unsaved', 'saving', 'saved'])
  })

  it('resolves flush at once when nothing is waiting', async () => {
    await expect(new SaveQueue().flush()).resolves.toBeUndefined()
  })

  it('reports an edit the backend refuses for good instead of retrying it, and goes on', async () => {
    const written: string[] = []
    const queue = new SaveQueue({
      debounceMs: 10,
      isPermanent: (e) => e instanceof Error && e.message.startsWith('refused'),
    })
    queue.enqueue({
      key: 'a',
      run: async () => {
        throw new Error('refused: the rating is submitted')
      },
    })
    queue.enqueue({ key: 'b', run: async () => void written.push('b') })
    await vi.advanceTimersByTimeAsync(10)
    // 'b' was acknowledged after the refusal, so the refusal is no longer the latest word.
    expect(written).toEqual(['b'])
    expect(queue.state.kind).toBe('saved')
    queue.enqueue({
      key: 'c',
      run: async () => {
        throw new Error('refused: the rating is submitted')
      },
    })
    await vi.advanceTimersByTimeAsync(10)
    expect(queue.state).toEqual({ kind: 'rejected', message: 'refused: the rating is submitted' })
    expect(queue.dirty).toBe(false)
  })
})
