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

describe('unsaved curation edits outlive the window', () => {
  /** A draft file in memory, recording every write. */
  function memoryFile(initial: string | null = null) {
    const file = { text: initial, writes: 0 }
    return {
      file,
      draft: {
        load: async () => file.text,
        keep: async (text: string | null) => {
          file.writes += 1
          file.text = text
        },
      },
    }
  }

  it('writes every change to the file and brings it back in a new window', async () => {
    const { file, draft } = memoryFile()
    const first = new UnsavedEdits()
    await first.keepIn(draft)
    first.record(at('ms-01'), { truth: truth('RRMS', 'G35.0'), basedOn: 1, consensusOf: null }, truth('RRMS', 'G35'))
    await first.written()
    expect(file.text).not.toBeNull()

    const next = new UnsavedEdits()
    await next.keepIn(draft)
    expect(next.find(at('ms-01'))).toEqual({ truth: truth('RRMS', 'G35.0'), basedOn: 1, consensusOf: null })
    expect(next.casesWithEdits('Dr Ana', 'demo')).toEqual(new Set(['ms-01']))

    next.forget(at('ms-01'))
    await next.written()
    expect(file.text).toBeNull()
  })

  it('writes nothing for a change that changes nothing, and the last of a burst last', async () => {
    const { file, draft } = memoryFile()
    const edits = new UnsavedEdits()
    await edits.keepIn(draft)
    const start = truth('RRMS', 'G35')
    for (const code of ['G35.0', 'G35.1', 'G35.2']) edits.record(at('ms-01'), { truth: truth('RRMS', code), basedOn: 1, consensusOf: null }, start)
    edits.record(at('ms-01'), { truth: truth('RRMS', 'G35.2'), basedOn: 1, consensusOf: null }, start)
    await edits.written()
    expect(file.writes).toBeLessThanOrEqual(3)
    const kept = new UnsavedEdits()
    await kept.keepIn(memoryFile(file.text).draft)
    expect(kept.find(at('ms-01'))!.truth.diagnosis_code).toBe('G35.2')
  })

  it('keeps an edit made before the file was read over the file’s older one', async () => {
    const older = new UnsavedEdits()
    const { file, draft } = memoryFile()
    await older.keepIn(draft)
    older.record(at('ms-01'), { truth: truth('older'), basedOn: 1, consensusOf: null }, truth('start'))
    await older.written()
    const edits = new UnsavedEdits()
    edits.record(at('ms-01'), { truth: truth('newer'), basedOn: 1, consensusOf: null }, truth('start'))
    await edits.keepIn(memoryFile(file.text).draft)
    expect(edits.find(at('ms-01'))!.truth.diagnosis).toBe('newer')
  })
})
