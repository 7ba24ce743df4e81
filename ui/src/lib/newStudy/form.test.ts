import { describe, expect, it } from 'vitest'
import { addSources, caseForm, formatKeyImages, fraction, parseKeyImages, problemPlace, sourceList } from './form'

describe('the new study form', () => {
  it('reads one source folder per line, ignoring blank lines and spaces', () => {
    expect(sourceList('  /data/export \n\n/data/cd\n   ')).toEqual(['/data/export', '/data/cd'])
    expect(sourceList('')).toEqual([])
  })

  it('adds chosen folders once each', () => {
    expect(addSources('/a', ['/b', '/a', '/c'])).toBe('/a\n/b\n/c')
    expect(addSources('', ['/a'])).toBe('/a')
  })

  it('places a problem as file:line, or the file alone', () => {
    expect(problemPlace({ file: 'predictions.csv', line: 3, field: 'case_id', message: 'm' })).toBe('predictions.csv:3')
    expect(problemPlace({ file: 'cases/case-001/case.json', line: null, field: '-', message: 'm' })).toBe(
      'cases/case-001/case.json',
    )
  })

  it('gives a fraction for the progress bar, 0 while the total is unknown', () => {
    expect(fraction(0, 0)).toBe(0)
    expect(fraction(5, 20)).toBe(0.25)
    expect(fraction(30, 20)).toBe(1)
  })

  it('tells a case form with typed changes from the one the draft holds', () => {
    const held = { disease_group: 'other', clinical_note: '', tasks: [{ id: 'dx', family: 'differential_diagnosis', prompt: 'What?' }] }
    expect(caseForm({ ...held, tasks: [...held.tasks] })).toBe(caseForm(held))
    expect(caseForm({ ...held, clinical_note: '61-year-old' })).not.toBe(caseForm(held))
    expect(caseForm({ ...held, disease_group: 'multiple_sclerosis' })).not.toBe(caseForm(held))
  })
})

describe('key images typed in the draft', () => {
  const series = [
    { id: 's1', slices: 20 },
    { id: 's2', slices: 5 },
  ]
  it('reads series and slices counted from 1, and writes them back the same way', () => {
    expect(parseKeyImages('s1 19, s2 1', series)).toEqual({ keys: [{ series: 's1', slice: 18 }, { series: 's2', slice: 0 }] })
    expect(formatKeyImages([{ series: 's1', slice: 18 }])).toBe('s1 19')
    expect(parseKeyImages('  ', series)).toEqual({ keys: [] })
  })
  it('names what is wrong: an unknown series, a slice out of range, a missing number', () => {
    expect(parseKeyImages('s9 1', series)).toEqual({ problem: '“s9 1”: no series s9 (this case has s1, s2)' })
    expect(parseKeyImages('s2 6', series)).toEqual({ problem: '“s2 6”: series s2 has slices 1 to 5' })
    expect(parseKeyImages('s2 0', series)).toEqual({ problem: '“s2 0”: series s2 has slices 1 to 5' })
    expect('problem' in parseKeyImages('s1', series)).toBe(true)
  })
})
