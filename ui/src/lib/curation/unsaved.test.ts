import { describe, expect, it } from 'vitest'
import { UnsavedEdits, sameTruth } from './unsaved'
import type { CuratedTruth } from './types'

const truth = (diagnosis: string, code?: string): CuratedTruth => ({
  diagnosis,
  ...(code === undefined ? {} : { diagnosis_code: code }),
  differential: [],
  lesions: [],
  expected_reasoning: '',
  tasks: [],
})
const at = (caseId: string, branch = 'main', curator = 'Dr Ana') => ({ curator, studyId: 'demo', caseId, branch })

describe('unsaved curation edits', () => {
  it('keeps an edit that differs from its start and gives a copy back', () => {
    const edits = new UnsavedEdits()
    const typed = truth('RRMS', 'G35.0')
    edits.record(at('ms-01'), { truth: typed, basedOn: 1, consensusOf: null }, truth('RRMS', 'G35'))
    typed.diagnosis_code = 'changed after recording'
    const found = edits.find(at('ms-01'))
    expect(found).toEqual({ truth: truth('RRMS', 'G35.0'), basedOn: 1, consensusOf: null })
    found!.truth.diagnosis = 'changed by the reader of it'
    expect(edits.find(at('ms-01'))!.truth.diagnosis).toBe('RRMS')
  })

  it('forgets the edit once the form is back to where it started', () => {
    const edits = new UnsavedEdits()
    edits.record(at('ms-01'), { truth: truth('RRMS', 'G35.0'), basedOn: 1, consensusOf: null }, truth('RRMS', 'G35'))
    edits.record(at('ms-01'), { truth: truth('RRMS', 'G35'), basedOn: 1, consensusOf: null }, truth('RRMS', 'G35'))
    expect(edits.find(at('ms-01'))).toBeNull()
  })

  it('keeps an unedited merge: it is not saved until the consensus is', () => {
    const edits = new UnsavedEdits()
    edits.record(at('ms-01'), { truth: truth('RRMS'), basedOn: 2, consensusOf: { a: 3, b: 4 } }, truth('RRMS'))
    expect(edits.find(at('ms-01'))?.consensusOf).toEqual({ a: 3, b: 4 })
  })

  it('keeps edits apart per curator, case and branch, and lists the cases that hold some', () => {
    const edits = new UnsavedEdits()
    const start = truth('RRMS')
    edits.record(at('ms-01'), { truth: truth('A'), basedOn: 1, consensusOf: null }, start)
    edits.record(at('ms-02', 'dr-ana'), { truth: truth('B'), basedOn: null, consensusOf: null }, start)
    edits.record(at('ms-03', 'main', 'Dr Rex'), { truth: truth('C'), basedOn: 1, consensusOf: null }, start)
    expect(edits.find(at('ms-02'))).toBeNull()
    expect(edits.find(at('ms-02', 'dr-ana'))?.truth.diagnosis).toBe('B')
    expect([...edits.casesWithEdits('Dr Ana', 'demo')].sort()).toEqual(['ms-01', 'ms-02'])
    expect([...edits.casesWithEdits('Dr Rex', 'demo')]).toEqual(['ms-03'])
    edits.forget(at('ms-01'))
    expect([...edits.casesWithEdits('Dr Ana', 'demo')]).toEqual(['ms-02'])
  })

  it('counts an emptied optional field as absent, as the save stores it', () => {
    expect(sameTruth({ ...truth('RRMS'), diagnosis_code: undefined }, truth('RRMS'))).toBe(true)
    expect(sameTruth(truth('RRMS', 'G35'), truth('RRMS'))).toBe(false)
  })
})
