import { describe, expect, it } from 'vitest'
import { filterCategories, needsMark, takesMark, type CategoryLike } from './categories'

const categories: CategoryLike[] = [
  { code: 'P1', name: 'missed finding', anchor: 'image' },
  { code: 'P4', name: 'anatomical mislocalisation', anchor: 'text_image' },
  { code: 'R1', name: 'faulty inference', anchor: 'text' },
  { code: 'R2', name: 'differential error', anchor: 'text' },
]

describe('filterCategories', () => {
  it('puts an exact code first, then codes starting with the query, then names', () => {
    expect(filterCategories(categories, 'p4').map((c) => c.code)).toEqual(['P4'])
    expect(filterCategories(categories, 'r').map((c) => c.code)).toEqual(['R1', 'R2'])
    expect(filterCategories(categories, 'f').map((c) => c.code)).toEqual(['P1', 'R1', 'R2'])
    expect(filterCategories(categories, 'MISLOC').map((c) => c.code)).toEqual(['P4'])
  })
  it('lists everything for an empty query and nothing for a query that matches nothing', () => {
    expect(filterCategories(categories, ' ')).toHaveLength(4)
    expect(filterCategories(categories, 'zz')).toEqual([])
  })
})

describe('marks by anchor', () => {
  it('requires a mark for image-only categories and offers one for text + image', () => {
    expect([needsMark('image'), needsMark('text_image'), needsMark('text')]).toEqual([true, false, false])
    expect([takesMark('image'), takesMark('text_image'), takesMark('text_series'), takesMark('text')]).toEqual([true, true, false, false])
  })
})
