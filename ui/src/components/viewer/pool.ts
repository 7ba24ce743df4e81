// NiiVue instances kept alive between viewports. Starting NiiVue (a WebGL 2 context and its
// shader programs) costs hundreds of milliseconds in software GL, more than decoding a series:
// a viewport takes a warm instance from here and gives it back when it closes, so opening the
// next case pays only for its pixels. One instance is warmed up when the app loads.

import { Niivue } from '@niivue/niivue'

export interface PooledViewer {
  nv: Niivue
  canvas: HTMLCanvasElement
  /** NiiVue's own drawScene, before a viewport wraps it. */
  drawScene: Niivue['drawScene']
}

/** WebKit keeps only a handful of WebGL contexts: never more than this many idle ones. */
const MAX_IDLE = 4

const idle: PooledViewer[] = []

function options(): ConstructorParameters<typeof Niivue>[0] {
  return {
    backColor: [0, 0, 0, 1],
    // The viewport draws the crosshair itself, one screen pixel wide (NiiVue's is sized in
    // voxels and fades to nothing in a small viewport); 0 turns NiiVue's off.
    crosshairWidth: 0,
    show3Dcrosshair: false,
    isOrientCube: false,
    isOrientationTextVisible: false,
    isColorbar: false,
    isRadiologicalConvention: true,
    isSliceMM: true,
    dragAndDropEnabled: false,
    loadingText: '',
    logLevel: 'warn',
  }
}

async function create(): Promise<PooledViewer> {
  const canvas = document.createElement('canvas')
  canvas.tabIndex = -1
  // NiiVue sizes the canvas from its parent: a detached canvas gets a holder until it is used.
  const holder = document.createElement('div')
  holder.style.cssText = 'position:fixed;left:-10000px;top:0;width:64px;height:64px'
  holder.appendChild(canvas)
  document.body.appendChild(holder)
  const nv = new Niivue(options())
  await nv.attachToCanvas(canvas)
  return { nv, canvas, drawScene: nv.drawScene.bind(nv) }
}

/** A NIfTI-1 volume of 2×2×2 int16 voxels: drawing it compiles the shaders a series needs. */
function tinyVolume(): ArrayBuffer {
  const bytes = new ArrayBuffer(352 + 16)
  const v = new DataView(bytes)
  v.setInt32(0, 348, true)
  ;[3, 2, 2, 2, 1, 1, 1, 1].forEach((d, i) => v.setInt16(40 + 2 * i, d, true))
  v.setInt16(70, 4, true) // int16
  v.setInt16(72, 16, true)
  ;[1, 1, 1, 1].forEach((p, i) => v.setFloat32(76 + 4 * i, p, true))
  v.setFloat32(108, 352, true)
  v.setFloat32(112, 1, true)
  v.setInt16(254, 1, true) // sform_code
  ;[280, 296, 312].forEach((at, row) => v.setFloat32(at + 4 * row, 1, true))
  new Uint8Array(bytes, 344, 4).set([0x6e, 0x2b, 0x31, 0])
  for (let i = 0; i < 8; i++) v.setInt16(352 + 2 * i, i * 100, true)
  return bytes
}

/** Creates one instance and draws a tiny volume with it, off screen, when the page is idle. */
export async function prewarm(): Promise<void> {
  if (idle.length > 0) return
  const entry = await create()
  await entry.nv.loadFromArrayBuffer(tinyVolume(), 'warm-up.nii')
  entry.nv.drawScene()
  clearVolumes(entry.nv)
  idle.push(entry)
}

function clearVolumes(nv: Niivue) {
  while (nv.volumes.length > 0) nv.removeVolumeByIndex(0)
}

/** A ready instance whose canvas is moved into `parent`. */
export async function acquire(parent: HTMLElement): Promise<PooledViewer> {
  const entry = idle.pop() ?? (await create())
  const holder = entry.canvas.parentElement
  parent.appendChild(entry.canvas)
  if (holder && holder !== parent && holder.childElementCount === 0) holder.remove()
  entry.nv.drawScene = entry.drawScene
  entry.nv.onLocationChange = () => {}
  entry.nv.scene.pan2Dxyzmm = [0, 0, 0, 1] as unknown as typeof entry.nv.scene.pan2Dxyzmm
  entry.nv.scene.crosshairPos = [0.5, 0.5, 0.5] as unknown as typeof entry.nv.scene.crosshairPos
  return entry
}

/** Gives an instance back: its volumes are dropped; beyond `MAX_IDLE` its context is freed. */
export function release(entry: PooledViewer) {
  entry.nv.onLocationChange = () => {}
  entry.nv.drawScene = entry.drawScene
  clearVolumes(entry.nv)
  entry.canvas.remove()
  if (idle.length < MAX_IDLE) {
    idle.push(entry)
  } else {
    entry.nv.gl?.getExtension('WEBGL_lose_context')?.loseContext()
  }
}
