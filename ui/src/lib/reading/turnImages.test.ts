import { describe, expect, it } from 'vitest'
import { consultationImages, turnImagesLabel } from './turnImages'

const label = (id: string) => ({ flair: 'FLAIR', t2: 'T2' })[id] ?? id

describe('consultationImages', () => {
  it('lists the task images, then each turn’s, and where each turn starts', () => {
    const { refs, firstOfTurn } = consultationImages(
      [{ series: 'flair', slice: 9 }],
      [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
        { role: 'user', content: 'new scan', key_images: [{ series: 't2', slice: 4 }, { series: 't2', slice: 5 }] },
        { role: 'assistant', content: 'b' },
      ],
      label,
    )
    expect(refs.map((r) => [r.series, r.slice])).toEqual([['flair', 9], ['t2', 4], ['t2', 5]])
    expect(refs[1].caption).toBe('turn 3: T2, slice 5')
    expect([...firstOfTurn]).toEqual([[2, 1]])
  })

  it('is the task’s images alone when no turn has any', () => {
    const { refs, firstOfTurn } = consultationImages([{ series: 'flair', slice: 0 }], null, label)
    expect(refs).toHaveLength(1)
    expect(firstOfTurn.size).toBe(0)
  })
})

describe('turnImagesLabel', () => {
  it('groups slices by series, counted from 1', () => {
    expect(turnImagesLabel([{ series: 't2', slice: 11 }], label)).toBe('T2 slice 12')
    expect(turnImagesLabel([{ series: 'flair', slice: 2 }, { series: 'flair', slice: 8 }, { series: 't2', slice: 0 }], label))
      .toBe('FLAIR slices 3, 9; T2 slice 1')
  })
})
