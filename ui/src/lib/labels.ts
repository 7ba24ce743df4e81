// How the study model reads to a clinician: display names and the viewer's overlay text.

import type { CaseSummary, DiseaseGroup, Sex, TaskFamily, ToComplete } from '../types'
import { rangeToWindow } from './viewer/presets'

export const DISEASE_GROUP_LABELS: Record<DiseaseGroup, string> = {
  multiple_sclerosis: 'Multiple sclerosis',
  stroke: 'Stroke',
  tumour: 'Tumour',
  other_abnormality: 'Other abnormality',
  normal: 'Normal',
}

/** The order groups are listed in: as NeuroVLM-Bench reports them, normal controls last. */
export const DISEASE_GROUP_ORDER: readonly DiseaseGroup[] = [
  'multiple_sclerosis',
  'stroke',
  'tumour',
  'other_abnormality',
  'normal',
]

/** What each `to_complete` value asks a curator to do (docs/bundle.md, "Scaffolded bundles"). */
export const TO_COMPLETE_LABELS: Record<ToComplete, string> = {
  disease_group: 'disease group',
  tasks: 'tasks',
  clinical_note: 'clinical note',
  age: 'age',
  series_labels: 'confirm guessed series labels',
  burned_in_annotation: 'check images for burned-in text',
}

/** The cases a curator still has to complete, by id, each with what is missing. */
export function casesNeedingCuration(cases: readonly CaseSummary[]): { id: string; missing: string }[] {
  return cases
    .filter((c) => c.to_complete.length > 0)
    .sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }))
    .map((c) => ({ id: c.id, missing: c.to_complete.map((t) => TO_COMPLETE_LABELS[t]).join(', ') }))
}

export const TASK_FAMILY_LABELS: Record<TaskFamily, string> = {
  differential_diagnosis: 'Differential diagnosis',
  lesion_identification: 'Lesion identification',
  rationale_generation: 'Rationale generation',
}

const LEVEL_LABELS: Record<number, string> = { 1: 'direct', 2: 'complex', 3: 'multi-turn' }

export function levelLabel(level: number): string {
  return `Level ${level}${LEVEL_LABELS[level] ? ` · ${LEVEL_LABELS[level]}` : ''}`
}

export function patientLabel(age: number, sex: Sex): string {
  return `${age} y · ${sex === 'O' ? 'sex not recorded' : sex}`
}

/** Cases grouped by disease group in `DISEASE_GROUP_ORDER`, each group's cases by id; cases whose
 * group a blinded reader is not shown (null) last, in one group of their own. */
export function groupCases(cases: readonly CaseSummary[]): { group: DiseaseGroup | null; cases: CaseSummary[] }[] {
  return [...DISEASE_GROUP_ORDER, null].map((group) => ({
    group,
    cases: cases
      .filter((c) => c.disease_group === group)
      .sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true })),
  })).filter((g) => g.cases.length > 0)
}

/**
 * The 0-based axial slice under a crosshair given as a fraction of the volume's extent (NiiVue's
 * `crosshairPos`): voxel i spans [i/n, (i+1)/n), so the last voxel owns the fraction 1 too.
 */
export function sliceIndexFromFraction(fraction: number, nSlices: number): number {
  if (!Number.isFinite(fraction) || nSlices < 1) return 0
  return Math.min(nSlices - 1, Math.max(0, Math.floor(fraction * nSlices)))
}

/** Slice position as readers say it: 1-based, "12/24". */
export function sliceLabel(index: number, nSlices: number): string {
  return `${index + 1}/${nSlices}`
}

/** The overlay's window for the intensity range mapped black→white. For stored integers, the
 * DICOM linear window that range is (so a CT brain window reads W 80 L 40, as the file and the
 * preset say); for continuous (floating-point) values, which that rule's ±½ and +1 do not fit,
 * its width and centre. */
export function windowLevelLabel(calMin: number, calMax: number, continuous = false): string {
  const { width, level } = continuous
    ? { width: calMax - calMin, level: (calMin + calMax) / 2 }
    : rangeToWindow(calMin, calMax)
  const round = (v: number) => (Math.abs(v) >= 10 ? Math.round(v).toString() : v.toPrecision(3))
  return `W ${round(width)}  L ${round(level)}`
}

/** Screen-left and screen-right labels of an axial image. */
export function axialSideMarkers(radiological: boolean): { left: string; right: string } {
  // Radiological convention: the viewer faces the patient, so the patient's right is on screen left.
  return radiological ? { left: 'R', right: 'L' } : { left: 'L', right: 'R' }
}
