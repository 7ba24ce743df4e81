import { describe, expect, it } from 'vitest'
import { addSources, fraction, labelChoices, problemPlace, sourceList } from './form'

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

  it('offers the known labels, and a label of the scan that is not one of them first', () => {
    expect(labelChoices('FLAIR')).toEqual(['T1', 'T1+C', 'T2', 'FLAIR', 'DWI', 'ADC', 'SWI', 'CT'])
    expect(labelChoices('Unknown')[0]).toBe('Unknown')
  })
})
