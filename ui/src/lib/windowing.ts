// Which rows of a long list to put in the page: the ones in view and a few on each side, with
// the height of the rest kept as padding so the scroll bar and positions stay those of the whole
// list. Plain TypeScript, unit-tested; the list component measures and scrolls.

/** Lists up to this many rows are rendered whole: a few hundred table rows render in a few
 * milliseconds, and the browser's find-in-page sees every row. A study's queue of 2,304 or
 * 10,000 rows rendered whole takes WebKitGTK seconds to lay out and makes every update slow. */
export const WINDOW_FROM = 500

/** Rows rendered beyond the visible ones on each side, so a quick scroll does not show a gap. */
export const OVERSCAN = 12

export interface RowWindow {
  /** First row rendered. */
  start: number
  /** One past the last row rendered. */
  end: number
  /** Height in px of the rows before `start` and after `end`, left out. */
  before: number
  after: number
}

/** The rows of a list of `count` rows of `rowHeight` px to render when `viewport` px of it are
 * visible from `scrollTop`. Every row when the list is short or the sizes are not known yet. */
export function rowWindow(count: number, rowHeight: number, scrollTop: number, viewport: number, windowFrom = WINDOW_FROM): RowWindow {
  if (count <= windowFrom || !(rowHeight > 0) || !(viewport > 0)) return { start: 0, end: count, before: 0, after: 0 }
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight)
  const visible = Math.ceil(viewport / rowHeight) + 1
  const start = Math.max(0, Math.min(count, first) - OVERSCAN)
  const end = Math.min(count, first + visible + OVERSCAN)
  return { start, end, before: start * rowHeight, after: (count - end) * rowHeight }
}
