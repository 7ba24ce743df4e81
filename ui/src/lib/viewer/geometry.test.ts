import { describe, expect, it } from 'vitest'
import {
  applyAffine,
  invertAffine,
  lpsToRas,
  markOnSlice,
  orientationLabels,
  mmToVoxel,
  projectToTile,
  rasToLps,
  unprojectFromTile,
  voxelToMm,
  type Tile,
} from './geometry'

describe('RAS and LPS', () => {
  it('negate x and y and keep z', () => {
    expect(lpsToRas([10, -20, 30])).toEqual([-10, 20, 30])
    expect(rasToLps([-10, 20, 30])).toEqual([10, -20, 30])
    expect(rasToLps(lpsToRas([1.5, 2.5, -3]))).toEqual([1.5, 2.5, -3])
  })
})

describe('voxel and mm', () => {
  // 0.5 mm columns, 0.75 mm rows, 3 mm slices, origin (−60, 40, 12), axes swapped by a rotation
  // of 90° about z: voxel i runs along world y, j along −x.
  const a = [
    [0, -0.75, 0, -60],
    [0.5, 0, 0, 40],
    [0, 0, 3, 12],
    [0, 0, 0, 1],
  ]

  it('maps a voxel centre by the affine', () => {
    // By hand: x = −0.75·4 − 60 = −63; y = 0.5·10 + 40 = 45; z = 3·2 + 12 = 18.
    expect(voxelToMm(a, [10, 4, 2])).toEqual([-63, 45, 18])
  })

  it('inverts the affine', () => {
    const v = mmToVoxel(a, [-63, 45, 18])!
    expect(v[0]).toBeCloseTo(10, 10)
    expect(v[1]).toBeCloseTo(4, 10)
    expect(v[2]).toBeCloseTo(2, 10)
    const inv = invertAffine(a)!
    expect(applyAffine(inv, applyAffine(a, [1, 2, 3])).map((x) => Math.round(x * 1e9) / 1e9)).toEqual([1, 2, 3])
  })

  it('refuses a singular affine', () => {
    expect(invertAffine([[1, 0, 0, 0], [2, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])).toBeNull()
  })
})

describe('which slice shows a mark', () => {
  const axialPoints = [
    [10, 10, 20.4],
    [12, 14, 20.4],
  ]
  it('shows it within half a slice of its plane', () => {
    // 5 mm slices: a slice at z = 22.9 is 2.5 mm away (shown), at 23 is 2.6 mm away (not).
    expect(markOnSlice('axial', axialPoints, 'axial', [0, 0, 22.9], 5)).toBe(true)
    expect(markOnSlice('axial', axialPoints, 'axial', [0, 0, 23], 5)).toBe(false)
    expect(markOnSlice('axial', axialPoints, 'axial', [0, 0, 17.9], 5)).toBe(true)
  })
  it('does not show a mark of one plane in another', () => {
    expect(markOnSlice('axial', axialPoints, 'coronal', [10, 10, 20.4], 5)).toBe(false)
  })
  it('uses the axis normal to the plane', () => {
    // A sagittal mark at x = −30 on a sagittal slice at x = −30.4, 1 mm thick.
    expect(markOnSlice('sagittal', [[-30, 5, 5]], 'sagittal', [-30.4, 99, 99], 1)).toBe(true)
    expect(markOnSlice('sagittal', [[-30, 5, 5]], 'sagittal', [-30.6, 5, 5], 1)).toBe(false)
  })
})

describe('projection onto a tile', () => {
  // A 400×300 px tile at (50, 20); the slice's left-bottom corner is world (−100, −75) and it spans
  // 200 × 150 mm, so 2 px per mm.
  const axial: Tile = {
    leftTopWidthHeight: [50, 20, 400, 300],
    leftTopMM: [-100, -75],
    fovMM: [200, 150],
    plane: 'axial',
  }

  it('maps world x to screen x and world y upwards', () => {
    // x = 0 → 100 mm from the left = 200 px; y = 0 → 75 mm from the bottom = 150 px up from 320.
    expect(projectToTile([0, 0, 7], axial)).toEqual([250, 170])
    expect(projectToTile([-100, -75, 7], axial)).toEqual([50, 320])
  })

  it('mirrors a tile with negative width (radiological convention)', () => {
    const mirrored: Tile = { ...axial, leftTopWidthHeight: [450, 20, -400, 300] }
    // Mirrored: world x = −100 (patient right) lands on the tile's right edge, 450.
    expect(projectToTile([-100, -75, 0], mirrored)).toEqual([450, 320])
    expect(projectToTile([50, 0, 0], mirrored)).toEqual([150, 170])
  })

  it('un-projects back onto the slice through the crosshair', () => {
    const mirrored: Tile = { ...axial, leftTopWidthHeight: [450, 20, -400, 300] }
    expect(unprojectFromTile(150, 170, mirrored, [1, 2, 33])).toEqual([50, 0, 33])
  })

  it('uses x and z on coronal tiles, y and z on sagittal ones', () => {
    const coronal: Tile = { ...axial, plane: 'coronal' }
    expect(projectToTile([0, 55, 0], coronal)).toEqual([250, 170])
    expect(unprojectFromTile(250, 170, coronal, [9, 55, 9])).toEqual([0, 55, 0])
    const sagittal: Tile = { ...axial, plane: 'sagittal' }
    // Sagittal screen x is world y: y = −100 → left edge; z = −75 → bottom.
    expect(projectToTile([12, -100, -75], sagittal)).toEqual([50, 320])
    expect(unprojectFromTile(50, 320, sagittal, [12, 0, 0])).toEqual([12, -100, -75])
  })
})

describe('orientation labels', () => {
  const tile: Tile = { leftTopWidthHeight: [0, 0, 100, 100], leftTopMM: [-50, -50], fovMM: [100, 100], plane: 'axial' }
  it('put the patient right on screen left when the tile is mirrored (radiological)', () => {
    expect(orientationLabels({ ...tile, leftTopWidthHeight: [100, 0, -100, 100] })).toEqual({
      left: 'R',
      right: 'L',
      top: 'A',
      bottom: 'P',
    })
  })
  it('put the patient left on screen left when it is not (neurological)', () => {
    expect(orientationLabels(tile)).toEqual({ left: 'L', right: 'R', top: 'A', bottom: 'P' })
  })
  it('read superior upwards on coronal and sagittal tiles', () => {
    expect(orientationLabels({ ...tile, plane: 'coronal' })).toMatchObject({ top: 'S', bottom: 'I' })
    expect(orientationLabels({ ...tile, plane: 'sagittal' })).toEqual({ left: 'P', right: 'A', top: 'S', bottom: 'I' })
  })
})
