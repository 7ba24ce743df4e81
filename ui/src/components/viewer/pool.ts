// NiiVue instances kept alive between viewports. Starting NiiVue (a WebGL 2 context and its
// shader programs) costs hundreds of milliseconds in software GL, more than decoding a series:
// a viewport takes a warm instance from here and gives it back when it closes, so opening the
// next case pays only for its pixels. One instance is warmed up when the app loads.

import { Niivue } from '@niivue/niivue'

export interface PooledViewer {
  nv: Niivue
  canvas: HTMLCanvasElement
  /** The canvas's parent, moved into each viewport: the canvas itself never leaves it (see `create`). */
  frame: HTMLDivElement
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
    // Wheel up goes to the next slice up, as ↑ and an upward drag in Scroll mode do.
    invertScrollDirection: true,
    dragAndDropEnabled: false,
    loadingText: '',
    logLevel: 'warn',
  }
}

async function create(): Promise<PooledViewer> {
  const canvas = document.createElement('canvas')
  // NiiVue watches the canvas's parent and, the moment the canvas leaves it, removes every listener
  // of its own: the wheel that changes the slice and the click that moves the crosshair went dead
  // in every pooled viewport (issue 19, item 8). The pool moves this frame instead; the canvas
  // stays in it for the instance's life.
  const frame = document.createElement('div')
  frame.style.cssText = 'position:absolute;inset:0'
  frame.appendChild(canvas)
  // NiiVue sizes the canvas from its parent: an unused frame waits in an off-screen holder.
  const holder = document.createElement('div')
  holder.style.cssText = 'position:fixed;left:-10000px;top:0;width:64px;height:64px'
  holder.appendChild(frame)
  document.body.appendChild(holder)
  // An opaque drawing buffer (the background is black anyway): the page compositor copies the
  // canvas instead of blending it over the page on every frame. NiiVue's own getContext call
  // then returns this context.
  canvas.getContext('webgl2', { alpha: false, antialias: false })
  const nv = new Niivue(options())
  // Replaced before attaching, which binds them as listeners. The keys are the viewer's
  // (Viewer.svelte, and the reading screen's after them): NiiVue's own would also move the
  // crosshair on h/j/k/l, change the view on v and clip planes on c/p. A double click would reset
  // the window to NiiVue's robust range behind the overlay's back; presets and W/L drag set it.
  nv.keyDownListener = () => {}
  nv.keyUpListener = () => {}
  nv.resetBriCon = () => {}
  await nv.attachToCanvas(canvas)
  configureForSlices(nv)
  return { nv, canvas, frame, drawScene: nv.drawScene.bind(nv) }
}

/**
 * Every fragment of a slice samples the volume NiiVue has already windowed and coloured; its
 * default slice shader also samples overlay, drawing and PAQD textures this viewer never fills
 * (marks are an SVG layer): one texture fetch instead of three cuts a redraw from ~16 ms to
 * ~2 ms in software GL.
 */
const SLICE_SHADER = `#version 300 es
precision highp float;
uniform highp sampler3D volume;
uniform float opacity;
in vec3 texPos;
out vec4 color;
void main() {
  color = vec4(texture(volume, texPos).rgb, opacity);
}`

/**
 * NiiVue recomputes a blurred gradient of the whole volume (two passes over every voxel) each
 * time the volume is loaded or re-windowed; only its 3-D render shades with it, and this viewer
 * shows slices only. A program whose vertices all fall outside the clip volume draws nothing, so
 * those passes cost no fragments: a window change takes ~25 ms instead of ~75 ms in software GL.
 */
function configureForSlices(nv: Niivue) {
  nv.setCustomSliceShader(SLICE_SHADER)
  const gl = nv.gl
  const stage = (type: number, source: string) => {
    const shader = gl.createShader(type)
    if (!shader) throw new Error('WebGL could not create a shader')
    gl.shaderSource(shader, source)
    gl.compileShader(shader)
    return shader
  }
  const program = gl.createProgram()
  gl.attachShader(program, stage(gl.VERTEX_SHADER, '#version 300 es\nvoid main() { gl_Position = vec4(2.0, 2.0, 2.0, 1.0); }'))
  gl.attachShader(program, stage(gl.FRAGMENT_SHADER, '#version 300 es\nprecision lowp float;\nout vec4 color;\nvoid main() { color = vec4(0.0); }'))
  gl.linkProgram(program)
  // Should a context refuse to link it, NiiVue keeps its own passes: slower, the same picture.
  if (!gl.getProgramParameter(program, gl.LINK_STATUS)) return
  const drawsNothing = { program, uniforms: {}, use: (context: WebGL2RenderingContext) => context.useProgram(program) }
  const gradientPasses = drawsNothing as unknown as NonNullable<Niivue['blurShader']>
  nv.blurShader = gradientPasses
  nv.gradientPrePassShader = gradientPasses
  nv.sobelFirstOrderShader = gradientPasses
  nv.sobelSecondOrderShader = gradientPasses
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

/** A ready instance whose canvas (in its frame) is moved into `parent`. */
export async function acquire(parent: HTMLElement): Promise<PooledViewer> {
  const entry = idle.pop() ?? (await create())
  const holder = entry.frame.parentElement
  parent.appendChild(entry.frame)
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
  entry.frame.remove()
  if (idle.length < MAX_IDLE) {
    idle.push(entry)
  } else {
    entry.nv.gl?.getExtension('WEBGL_lose_context')?.loseContext()
  }
}
