import { describe, expect, it } from 'vitest'
import { normaliseSelection, segmentText } from './spans'

describe('normaliseSelection', () => {
  const text = 'FLAIR shows  periventricular lesions.'
  it('orders the ends and trims surrounding whitespace', () => {
    expect(normaliseSelection(text, 13, 5)).toEqual({ start: 6, end: 11 })
    expect(text.slice(6, 11)).toBe('shows')
  })
  it('is null for an empty or whitespace-only selection', () => {
    expect(normaliseSelection(text, 4, 4)).toBeNull()
    expect(normaliseSelection(text, 11, 13)).toBeNull()
  })
  it('clamps offsets outside the text', () => {
    expect(normaliseSelection('abc', -4, 99)).toEqual({ start: 0, end: 3 })
  })
  it('widens a drag that starts or ends mid-word to whole words', () => {
    const t = 'the two tiny punctate hyperintensities within'
    // As dragged in the first hour: "e two tiny punctate hyperintensities wit".
    const dragged = normaliseSelection(t, 2, 41)!
    expect(t.slice(dragged.start, dragged.end)).toBe('the two tiny punctate hyperintensities within')
    // Whole words stay as they are; punctuation is not part of a word.
    expect(normaliseSelection(text, 6, 11)).toEqual({ start: 6, end: 11 })
    expect(text.slice(normaliseSelection(text, 30, 37)!.start, normaliseSelection(text, 30, 37)!.end)).toBe('lesions.')
    expect(text.slice(normaliseSelection(text, 30, 35)!.start, normaliseSelection(text, 30, 35)!.end)).toBe('lesions')
  })
  it('snaps over letters of any script and astral characters, never splitting a surrogate pair', () => {
    const greek = 'βλάβη λευκής ουσίας'
    const span = normaliseSelection(greek, 8, 9)!
    expect(greek.slice(span.start, span.end)).toBe('λευκής')
    const astral = 'x 𝛼𝛽 y'
    const pair = normaliseSelection(astral, 4, 5)!
    expect(astral.slice(pair.start, pair.end)).toBe('𝛼𝛽')
  })
  it('counts UTF-16 code units, as the backend stores them', () => {
    // "≥" is one code unit, "𝛼" (U+1D6FC) two.
    const s = 'α ≥ 𝛼 x'
    expect(normaliseSelection(s, 4, 8)).toEqual({ start: 4, end: 8 })
    expect(s.slice(4, 8)).toBe('𝛼 x')
  })
})

describe('segmentText', () => {
  it('returns the whole text as one plain segment when there are no spans', () => {
    expect(segmentText('abc', [])).toEqual([{ start: 0, end: 3, text: 'abc', uids: [] }])
  })

  it('cuts at every boundary and lists overlapping labels per segment', () => {
    const text = 'the left frontal lesion'
    const segs = segmentText(text, [
      { uid: 'a', start: 4, end: 16 }, // "left frontal"
      { uid: 'b', start: 9, end: 23 }, // "frontal lesion"
    ])
    expect(segs.map((s) => [s.text, s.uids])).toEqual([
      ['the ', []],
      ['left ', ['a']],
      ['frontal', ['a', 'b']],
      [' lesion', ['b']],
    ])
    expect(segs.map((s) => s.text).join('')).toBe(text)
  })

  it('ignores empty spans and clamps spans that run past the text', () => {
    const segs = segmentText('abcdef', [
      { uid: 'x', start: 2, end: 2 },
      { uid: 'y', start: 4, end: 40 },
    ])
    expect(segs.map((s) => [s.text, s.uids])).toEqual([
      ['abcd', []],
      ['ef', ['y']],
    ])
  })
})
