import { describe, expect, it } from 'vitest'
import { placeFromKey, placeKey, placeName, samePlace, textAt } from './texts'

const response = {
  answer: 'Multiple sclerosis',
  rationale: 'Periventricular lesions.',
  turns: [
    { role: 'user', content: 'What is it?' },
    { role: 'assistant', content: 'Still MS.' },
  ],
}

describe('text places', () => {
  it('round-trip through their keys', () => {
    for (const place of [
      { text: 'answer' as const, turn: null },
      { text: 'rationale' as const, turn: null },
      { text: 'turn' as const, turn: 1 },
    ]) {
      expect(placeFromKey(placeKey(place))).toEqual(place)
    }
    expect(placeFromKey('prompt')).toBeNull()
    expect(placeFromKey(undefined)).toBeNull()
    expect(placeFromKey('turn-x')).toBeNull()
  })

  it('find their text, and nothing for a turn the response lacks', () => {
    expect(textAt(response, { text: 'answer', turn: null })).toBe('Multiple sclerosis')
    expect(textAt(response, { text: 'turn', turn: 1 })).toBe('Still MS.')
    expect(textAt(response, { text: 'turn', turn: 2 })).toBe('')
    expect(textAt({ ...response, rationale: null }, { text: 'rationale', turn: null })).toBe('')
  })

  it('tell turns apart and name them from 1', () => {
    expect(samePlace({ text: 'turn', turn: 1 }, { text: 'turn', turn: 3 })).toBe(false)
    expect(samePlace({ text: 'answer', turn: null }, { text: 'answer', turn: null })).toBe(true)
    expect(placeName({ text: 'turn', turn: 1 })).toBe('turn 2')
    expect(placeName({ text: 'answer', turn: null })).toBe('the answer')
  })
})
