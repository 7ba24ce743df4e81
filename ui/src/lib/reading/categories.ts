// Picking an error category by keyboard: type its code ("p4") or part of its name ("misloc").

export interface CategoryLike {
  code: string
  name: string
  anchor: 'image' | 'text' | 'text_image' | 'text_series'
}

/** Categories matching `query`: an exact code first, then codes, then names containing it. */
export function filterCategories<C extends CategoryLike>(categories: readonly C[], query: string): C[] {
  const q = query.trim().toLowerCase()
  if (q === '') return [...categories]
  const rank = (c: C) => {
    const code = c.code.toLowerCase()
    if (code === q) return 0
    if (code.startsWith(q)) return 1
    if (c.name.toLowerCase().includes(q)) return 2
    return 3
  }
  return categories
    .map((c, i) => ({ c, i, r: rank(c) }))
    .filter((x) => x.r < 3)
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((x) => x.c)
}

/** Whether a label of this category must point at the image (a mark). */
export function needsMark(anchor: CategoryLike['anchor']): boolean {
  return anchor === 'image'
}

/** Whether a label of this category may carry a mark (the image is part of its anchor). */
export function takesMark(anchor: CategoryLike['anchor']): boolean {
  return anchor === 'image' || anchor === 'text_image'
}

/** Severity of a labelled error, as docs/taxonomy.md defines it. */
export const SEVERITY_LABELS: Record<number, string> = {
  1: 'clinically insignificant',
  2: 'significant',
  3: 'significant and urgent',
}
