// Patient-space geometry for the viewer, independent of NiiVue so it can be tested.
//
// Two conventions meet here. Marks and the bundle speak DICOM LPS (x to the patient's Left, y to
// Posterior, z to Superior); NiiVue's world space is NIfTI RAS (x Right, y Anterior, z Superior).
// The same point has x and y negated between the two. Everything inside the viewer is RAS;
// conversion happens only where a Mark comes in or goes out.

import type { Plane } from '../../types'

export type Vec3 = [number, number, number]
/** A 4×4 affine, row-major: `world = A · [i, j, k, 1]`. */
export type Affine = number[][]

export function lpsToRas([x, y, z]: readonly number[]): Vec3 {
  return [-x, -y, z]
}

export function rasToLps([x, y, z]: readonly number[]): Vec3 {
  return [-x, -y, z]
}

/** The world axis (0 = x, 1 = y, 2 = z) a plane is perpendicular to; the same in RAS and LPS. */
export const PLANE_NORMAL_AXIS: Record<Plane, 0 | 1 | 2> = { sagittal: 0, coronal: 1, axial: 2 }

export function applyAffine(a: Affine, [i, j, k]: readonly number[]): Vec3 {
  return [0, 1, 2].map((r) => a[r][0] * i + a[r][1] * j + a[r][2] * k + a[r][3]) as Vec3
}

/** Inverse of an affine (3×3 linear part + translation); null when the linear part is singular. */
export function invertAffine(a: Affine): Affine | null {
  const [[m00, m01, m02], [m10, m11, m12], [m20, m21, m22]] = a
  const c00 = m11 * m22 - m12 * m21
  const c01 = m12 * m20 - m10 * m22
  const c02 = m10 * m21 - m11 * m20
  const det = m00 * c00 + m01 * c01 + m02 * c02
  if (!Number.isFinite(det) || Math.abs(det) < 1e-12) return null
  const inv = [
    [c00, m02 * m21 - m01 * m22, m01 * m12 - m02 * m11],
    [c01, m00 * m22 - m02 * m20, m02 * m10 - m00 * m12],
    [c02, m01 * m20 - m00 * m21, m00 * m11 - m01 * m10],
  ].map((row) => row.map((v) => v / det))
  const t = [a[0][3], a[1][3], a[2][3]]
  return [
    ...inv.map((row) => [...row, -(row[0] * t[0] + row[1] * t[1] + row[2] * t[2])]),
    [0, 0, 0, 1],
  ]
}

/** World position (mm) of voxel centre (i, j, k). */
export function voxelToMm(a: Affine, ijk: readonly number[]): Vec3 {
  return applyAffine(a, ijk)
}

/** Voxel coordinates (fractional) of a world position; null for a singular affine. */
export function mmToVoxel(a: Affine, mm: readonly number[]): Vec3 | null {
  const inv = invertAffine(a)
  return inv ? applyAffine(inv, mm) : null
}

/**
 * Whether a mark drawn in `plane` shows on the slice through `sliceRas` (the viewport's crosshair)
 * of that plane: its points lie within half a slice thickness of the slice, in mm.
 * A mark drawn in another plane is not shown as if it were in this one.
 */
export function markOnSlice(
  markPlane: Plane,
  pointsRas: readonly (readonly number[])[],
  viewPlane: Plane,
  sliceRas: readonly number[],
  sliceThicknessMm: number,
): boolean {
  if (markPlane !== viewPlane || pointsRas.length === 0) return false
  const axis = PLANE_NORMAL_AXIS[viewPlane]
  const half = sliceThicknessMm / 2
  return pointsRas.every((p) => Math.abs(p[axis] - sliceRas[axis]) <= half + 1e-6)
}

/**
 * How NiiVue lays one 2-D slice on the canvas (`nv.screenSlices[i]`): the tile in canvas pixels
 * (a negative width means mirrored left–right), the world mm at its left-bottom corner and its
 * field of view in the tile's own (screen-x, screen-y) axes.
 */
export interface Tile {
  leftTopWidthHeight: readonly number[]
  leftTopMM: readonly number[]
  fovMM: readonly number[]
  plane: Plane
}

/** RAS → (screen-x, screen-y, depth) axes of a plane, as NiiVue swizzles them. */
function toTileAxes(ras: readonly number[], plane: Plane): Vec3 {
  const [x, y, z] = ras
  if (plane === 'coronal') return [x, z, y]
  if (plane === 'sagittal') return [y, z, x]
  return [x, y, z]
}

function fromTileAxes([a, b, depth]: readonly number[], plane: Plane): Vec3 {
  if (plane === 'coronal') return [a, depth, b]
  if (plane === 'sagittal') return [depth, a, b]
  return [a, b, depth]
}

function unmirrored(ltwh: readonly number[]): { left: number; width: number; mirrored: boolean } {
  return ltwh[2] < 0
    ? { left: ltwh[0] + ltwh[2], width: -ltwh[2], mirrored: true }
    : { left: ltwh[0], width: ltwh[2], mirrored: false }
}

/** Canvas pixel of a world point projected onto a tile's plane (NiiVue's `frac2canvasPos` rule). */
export function projectToTile(ras: readonly number[], tile: Tile): [number, number] {
  const [a, b] = toTileAxes(ras, tile.plane)
  const fx = (a - tile.leftTopMM[0]) / tile.fovMM[0]
  const fy = (b - tile.leftTopMM[1]) / tile.fovMM[1]
  const { left, width, mirrored } = unmirrored(tile.leftTopWidthHeight)
  const screenFx = mirrored ? 1 - fx : fx
  return [left + screenFx * width, tile.leftTopWidthHeight[1] + (1 - fy) * tile.leftTopWidthHeight[3]]
}

/** World point (RAS mm) under a canvas pixel of a tile, on the slice through `sliceRas`. */
export function unprojectFromTile(x: number, y: number, tile: Tile, sliceRas: readonly number[]): Vec3 {
  const { left, width, mirrored } = unmirrored(tile.leftTopWidthHeight)
  let fx = (x - left) / width
  if (mirrored) fx = 1 - fx
  const fy = 1 - (y - tile.leftTopWidthHeight[1]) / tile.leftTopWidthHeight[3]
  const depth = toTileAxes(sliceRas, tile.plane)[2]
  return fromTileAxes([tile.leftTopMM[0] + fx * tile.fovMM[0], tile.leftTopMM[1] + fy * tile.fovMM[1], depth], tile.plane)
}

const POSITIVE_LETTER = ['R', 'A', 'S']
const NEGATIVE_LETTER = ['L', 'P', 'I']

/**
 * The patient directions at the tile's screen edges, read from the tile itself (its mirroring and
 * the sign of its field of view), so they are right whatever convention NiiVue draws with.
 */
export function orientationLabels(tile: Tile): { left: string; right: string; top: string; bottom: string } {
  const axes: Record<Plane, [number, number]> = { axial: [0, 1], coronal: [0, 2], sagittal: [1, 2] }
  const [h, v] = axes[tile.plane]
  const rightIsPositive = tile.fovMM[0] > 0 !== tile.leftTopWidthHeight[2] < 0
  const upIsPositive = tile.fovMM[1] > 0
  return {
    right: (rightIsPositive ? POSITIVE_LETTER : NEGATIVE_LETTER)[h],
    left: (rightIsPositive ? NEGATIVE_LETTER : POSITIVE_LETTER)[h],
    top: (upIsPositive ? POSITIVE_LETTER : NEGATIVE_LETTER)[v],
    bottom: (upIsPositive ? NEGATIVE_LETTER : POSITIVE_LETTER)[v],
  }
}
