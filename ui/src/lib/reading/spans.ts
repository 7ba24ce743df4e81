// Text spans of a rationale: a selection turned into UTF-16 offsets (what JavaScript strings and
// the backend's span_start/span_end count), and the text cut into segments for highlighting.

export interface Span {
  start: number
  end: number
}

export interface SpanOwner extends Span {
  uid: string
}

/** A run of text covered by the same set of labels (none for plain text). */
export interface Segment extends Span {
  text: string
  uids: string[]
}

/** Letters (with their combining marks) and digits: what a word is made of, in any script. */
const WORD_CHAR = /[\p{L}\p{M}\p{N}]/u

/**
 * The span between two offsets in `text`, in either order, without the whitespace a mouse
 * selection tends to pick up at its ends, and widened to whole words, as annotation tools snap a
 * drag that starts or ends mid-word ("e two tiny … wit" becomes "the two tiny … with"). Null
 * when nothing but whitespace is selected.
 */
export function normaliseSelection(text: string, anchor: number, focus: number): Span | null {
  let start = Math.max(0, Math.min(anchor, focus, text.length))
  let end = Math.min(text.length, Math.max(anchor, focus, 0))
  while (start < end && /\s/.test(text[start])) start++
  while (end > start && /\s/.test(text[end - 1])) end--
  if (start >= end) return null
  // An end between the two halves of a surrogate pair takes the whole character.
  if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start--
  if (end < text.length && isLowSurrogate(text.charCodeAt(end))) end++
  while (start > 0 && isWordAt(text, before(text, start)) && isWordAt(text, start)) start = before(text, start)
  while (end < text.length && isWordAt(text, end) && isWordAt(text, before(text, end))) end = after(text, end)
  return { start, end }
}

const isWordAt = (text: string, i: number) => WORD_CHAR.test(String.fromCodePoint(text.codePointAt(i)!))
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff
/** The offset of the code point before `i` (two UTF-16 units back for an astral character). */
const before = (text: string, i: number) => (i >= 2 && isLowSurrogate(text.charCodeAt(i - 1)) ? i - 2 : i - 1)
/** The offset after the code point at `i`. */
const after = (text: string, i: number) => i + (text.codePointAt(i)! > 0xffff ? 2 : 1)

/** Cuts `text` at every span boundary; each segment lists the labels covering it, in span order. */
export function segmentText(text: string, spans: readonly SpanOwner[]): Segment[] {
  const inside = spans.filter((s) => s.start < s.end && s.start < text.length && s.end > 0)
  const cuts = new Set<number>([0, text.length])
  for (const s of inside) {
    cuts.add(Math.max(0, s.start))
    cuts.add(Math.min(text.length, s.end))
  }
  const points = [...cuts].sort((a, b) => a - b)
  const segments: Segment[] = []
  for (let i = 0; i + 1 < points.length; i++) {
    const [start, end] = [points[i], points[i + 1]]
    const uids = inside.filter((s) => s.start <= start && s.end >= end).map((s) => s.uid)
    segments.push({ start, end, text: text.slice(start, end), uids })
  }
  return segments
}

/**
 * The offset in a container's text of a DOM point (node, offset) inside it: the length of the
 * text from the container's start to that point. Null when the point lies outside the container.
 */
export function textOffsetIn(container: Node, node: Node, offset: number): number | null {
  if (!container.contains(node)) return null
  const range = document.createRange()
  range.setStart(container, 0)
  range.setEnd(node, offset)
  return range.toString().length
}
