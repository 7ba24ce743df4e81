// The reading screen's keyboard: one table, so the cheat sheet and the handler cannot disagree.

export type KeyAction =
  | { kind: 'next' }
  | { kind: 'previous' }
  | { kind: 'digit'; digit: number }
  | { kind: 'row'; delta: 1 | -1 }
  | { kind: 'label-text' }
  | { kind: 'label-image' }
  | { kind: 'submit' }
  | { kind: 'undo' }
  | { kind: 'redo' }
  | { kind: 'cheat-sheet' }
  | { kind: 'escape' }

export interface KeyInput {
  key: string
  ctrlKey: boolean
  metaKey: boolean
  shiftKey: boolean
  altKey: boolean
  /** The key went to a text field: plain keys are typing, not commands. */
  inTextField: boolean
}

/** What the cheat sheet shows, in order. */
export const KEY_HELP: readonly { keys: string; what: string }[] = [
  { keys: 'j / n', what: 'next response' },
  { keys: 'k / p', what: 'previous response' },
  { keys: '1 – 9', what: 'score the highlighted rubric row (then moves to the next row)' },
  { keys: '[ / ]', what: 'previous / next rubric row' },
  { keys: 'e', what: 'label the selected rationale text as an error' },
  { keys: 'i', what: 'label an image finding (draw on the image)' },
  { keys: 'in the label box', what: 'type a code or name to filter, ↑ ↓ Enter to pick, 1 – 3 severity' },
  { keys: 'Ctrl + Enter', what: 'submit the rating' },
  { keys: 'Ctrl + Z', what: 'undo' },
  { keys: 'Ctrl + Shift + Z / Ctrl + Y', what: 'redo' },
  { keys: '?', what: 'this sheet' },
  { keys: 'Esc', what: 'close the label box or this sheet' },
  {
    keys: 'after a click on the image',
    what: "the viewer's keys come first: arrows slice, 1 – 9 window presets (not scores), k key images; n / p still navigate. A click on the side panel gives 1 – 9 back to the rubric",
  },
]

export function keyAction(input: KeyInput): KeyAction | null {
  const ctrl = input.ctrlKey || input.metaKey
  const key = input.key
  if (key === 'Escape') return { kind: 'escape' }
  if (ctrl && key === 'Enter') return { kind: 'submit' }
  // Text fields keep their own undo; everything else is typing.
  if (input.inTextField) return null
  if (ctrl && !input.altKey) {
    const lower = key.toLowerCase()
    if (lower === 'z') return input.shiftKey ? { kind: 'redo' } : { kind: 'undo' }
    if (lower === 'y') return { kind: 'redo' }
    return null
  }
  if (input.altKey) return null
  switch (key) {
    case 'j':
    case 'n':
      return { kind: 'next' }
    case 'k':
    case 'p':
      return { kind: 'previous' }
    case ']':
      return { kind: 'row', delta: 1 }
    case '[':
      return { kind: 'row', delta: -1 }
    case 'e':
      return { kind: 'label-text' }
    case 'i':
      return { kind: 'label-image' }
    case '?':
      return { kind: 'cheat-sheet' }
  }
  if (/^[0-9]$/.test(key)) return { kind: 'digit', digit: Number(key) }
  return null
}

/** Why `e` did nothing: there is no selection, or it lies outside the rationale (the only text a
 * label can point into). Shown beside the rationale instead of failing silently. */
export function labelTextRefusal(selection: 'none' | 'outside'): string {
  const how = 'select words in the model’s answer, its rationale or a turn of the consultation, then press e; i labels an image finding'
  return selection === 'none'
    ? `Nothing is selected to label: ${how}.`
    : `The selection is outside the model’s texts, and labels point into those only: ${how}.`
}

/**
 * While that refusal is on screen, the keys that score the rubric do nothing: they were most likely
 * typed for the label box that did not open (a code, a severity). Esc or a click closes it.
 */
export function heldByRefusal(action: KeyAction): boolean {
  return action.kind === 'digit' || action.kind === 'row'
}
