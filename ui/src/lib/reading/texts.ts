// The texts of a response a rater can label a span in: the answer, the rationale and each turn
// of a consultation. A label names its text (and turn) as the backend stores it; the screen finds
// a text's element by its place key.

import type { ReadingResponse, SpanText } from '../../ratingTypes'

/** Which text: the answer, the rationale, or turn `turn` (its index in the response's turns). */
export interface TextPlace {
  text: SpanText
  turn: number | null
}

/** A stable key for a place, used as the text element's `data-place`. */
export function placeKey(place: TextPlace): string {
  return place.text === 'turn' ? `turn-${place.turn}` : place.text
}

/** The place a `data-place` key names, or null for anything else. */
export function placeFromKey(key: string | undefined): TextPlace | null {
  if (key === 'answer' || key === 'rationale') return { text: key, turn: null }
  const turn = /^turn-(\d+)$/.exec(key ?? '')
  return turn ? { text: 'turn', turn: Number(turn[1]) } : null
}

export const samePlace = (a: TextPlace, b: TextPlace) => a.text === b.text && (a.text !== 'turn' || a.turn === b.turn)

/** The text at a place in this response; empty when the response has no such text. */
export function textAt(response: ReadingResponse, place: TextPlace): string {
  switch (place.text) {
    case 'answer':
      return response.answer
    case 'rationale':
      return response.rationale ?? ''
    case 'turn':
      return response.turns?.[place.turn ?? -1]?.content ?? ''
  }
}

/** How the label list names where a span lies. Turns are counted from 1 for people. */
export function placeName(place: TextPlace): string {
  return place.text === 'turn' ? `turn ${(place.turn ?? 0) + 1}` : `the ${place.text}`
}
