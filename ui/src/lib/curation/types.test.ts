import { describe, expect, it } from 'vitest'
import { latestMain, nextLesionId, parseLines, showValue, type Version } from './types'

const version = (n: number, branch: string): Version => ({
  version: n,
  branch,
  based_on: null,
  status: 'draft',
  source: 'curator',
  author: 'Ana',
  created_at: '2026-01-01T00:00:00Z',
  reviews: [],
  truth: { diagnosis: 'x', differential: [], lesions: [], expected_reasoning: '', tasks: [] },
})

describe('curation helpers', () => {
  it('splits evidence by line and drops blanks', () => {
    expect(parseLines(' ovoid lesions \n\n young age\n')).toEqual(['ovoid lesions', 'young age'])
  })
  it('numbers a new lesion after the highest id', () => {
    const lesion = (id: string) => ({ id, description: '', marks: [], shown_on: [] })
    expect(nextLesionId([])).toBe('L1')
    expect(nextLesionId([lesion('L2'), lesion('L7'), lesion('extra')])).toBe('L8')
  })
  it('shows diff values readably', () => {
    expect(showValue(null)).toBe('—')
    expect(showValue('MS')).toBe('MS')
    expect(showValue({ a: 1 })).toBe('{"a":1}')
  })
  it('edits start from the latest version of main, not of an independent curation', () => {
    expect(latestMain([])).toBeNull()
    expect(latestMain([version(1, 'main'), version(2, 'main'), version(3, 'ana')])?.version).toBe(2)
  })
})
