import { describe, expect, it } from 'vitest'
import {
  branchFor,
  defaultHumanRole,
  latestMain,
  latestOfOtherBranches,
  latestOn,
  latestSavedOn,
  nextLesionId,
  nextVersionNumber,
  parseLines,
  showSide,
  showValue,
  statusLabel,
  type Version,
} from './types'

const version = (n: number, branch: string): Version => ({
  version: n,
  branch,
  based_on: null,
  status: 'draft',
  source: 'curator',
  author: 'Ana',
  created_at: '2026-01-01T00:00:00Z',
  reviews: [],
  imported_final: false,
  truth: { diagnosis: 'x', differential: [], lesions: [], expected_reasoning: '', tasks: [] },
})

describe('curation helpers', () => {
  it('shows an imported final as imported, a reviewed one as final', () => {
    expect(statusLabel({ status: 'final', imported_final: true })).toBe('Final (imported, not reviewed here)')
    expect(statusLabel({ status: 'final', imported_final: false })).toBe('Final')
    expect(statusLabel({ status: 'draft', imported_final: false })).toBe('Draft')
  })
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

describe('independent curations', () => {
  const history = [version(1, 'main'), version(2, 'ana'), version(3, 'ben'), version(4, 'ana'), version(5, 'main')]
  it('offers the latest version of each other branch, oldest first', () => {
    expect(latestOfOtherBranches(history).map((v) => v.version)).toEqual([3, 4])
    expect(latestOfOtherBranches([version(1, 'main')])).toEqual([])
  })
  it('an edit of a branch starts from its latest, a new branch from main', () => {
    expect(latestOn(history, 'ana')?.version).toBe(4)
    expect(latestOn(history, 'cleo')?.version).toBe(5)
    expect(latestOn([], 'cleo')).toBeNull()
  })
  it('names the version saved on a branch itself, and the number the next save takes', () => {
    expect(latestSavedOn(history, 'ana')?.version).toBe(4)
    expect(latestSavedOn(history, 'cleo')).toBeNull()
    expect(nextVersionNumber(history)).toBe(6)
    expect(nextVersionNumber([])).toBe(1)
  })
  it('names a curator’s branch after them, never main', () => {
    expect(branchFor('Dr Ana Álvarez')).toBe('dr-ana-alvarez')
    expect(branchFor('  Main ')).toBe('curation')
    expect(branchFor('李')).toBe('curation')
  })
  it('shows each side of a disagreement in a line', () => {
    const lesion = { id: 'L1', description: 'left frontal', marks: [], shown_on: [] }
    expect(showSide('lesions[L1]', lesion)).toBe('left frontal · 0 mark(s)')
    expect(showSide('lesions[L1]', null)).toBe('(none)')
    const differential = [
      { diagnosis: 'MS', supporting: [], opposing: [] },
      { diagnosis: 'ADEM', supporting: [], opposing: [] },
    ]
    expect(showSide('differential', differential)).toBe('1. MS  2. ADEM')
    expect(showSide('difficulty', 2)).toBe('2')
    const task = { task_id: 't1', family: 'lesion_identification', key_images: [{ series: 'flair', slice: 17 }] }
    expect(showSide('tasks[t1]', task)).toBe('lesion identification · key images flair 18')
  })
  it('answers in the rater’s own role by default', () => {
    expect(defaultHumanRole('neurologist')).toBe('neurologist')
    expect(defaultHumanRole('curator')).toBe('medical_student')
  })
})
