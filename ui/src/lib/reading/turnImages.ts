// The images a consultation showed the model: the task's key images first, then each turn's
// (a follow-up that brings another series or a new scan), as one list for the viewer's key-image
// bar, with where each turn's images start in it so that reading a turn can show them.
import type { KeyImageRef, SliceRef, Turn } from '../../types'

export interface ConsultationImages {
  /** The viewer's key images: the task's, then each turn's, each captioned with where it came from. */
  refs: KeyImageRef[]
  /** Per turn index, the index in `refs` of that turn's first image (turns without images absent). */
  firstOfTurn: Map<number, number>
}

export function consultationImages(task: SliceRef[], turns: Turn[] | null, labelOf: (series: string) => string): ConsultationImages {
  const refs: KeyImageRef[] = task.map((k) => ({ ...k, caption: `the task: ${labelOf(k.series)}, slice ${k.slice + 1}` }))
  const firstOfTurn = new Map<number, number>()
  ;(turns ?? []).forEach((turn, i) => {
    const images = turn.key_images ?? []
    if (images.length === 0) return
    firstOfTurn.set(i, refs.length)
    for (const k of images) refs.push({ series: k.series, slice: k.slice, caption: `turn ${i + 1}: ${labelOf(k.series)}, slice ${k.slice + 1}` })
  })
  return { refs, firstOfTurn }
}

/** What a turn's images button says: "T2 slice 12", "FLAIR slices 3, 9". */
export function turnImagesLabel(images: SliceRef[], labelOf: (series: string) => string): string {
  const bySeries = new Map<string, number[]>()
  for (const k of images) bySeries.set(k.series, [...(bySeries.get(k.series) ?? []), k.slice + 1])
  return [...bySeries]
    .map(([series, slices]) => `${labelOf(series)} ${slices.length === 1 ? 'slice' : 'slices'} ${slices.join(', ')}`)
    .join('; ')
}
