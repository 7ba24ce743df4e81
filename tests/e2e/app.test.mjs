// Drives the real NeuroRater window (WebKitGTK through tauri-driver) on a fresh database: the app
// must build the demo study on first start, list it, and show an image beside a rationale.
// Run through scripts/e2e.sh, which provides the display, the driver and NEURORATER_DB.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PNG } from 'pngjs'
import { ARTIFACTS, FIRST_START_TIMEOUT_MS, backToCaseList, openSession } from './support.mjs'

const DISEASE_GROUPS = ['Multiple sclerosis', 'Stroke', 'Tumour', 'Other abnormality', 'Normal']
const IMAGE_TIMEOUT_MS = 60_000
// A pixel brighter than this (0–255 luma) is image, not the black background or JPEG-free noise.
const BACKGROUND_LUMA = 12
// The brain fills well over a tenth of an axial slice's field of view.
const MIN_IMAGE_FRACTION = 0.1

let browser

before(async () => {
  browser = await openSession()
})

after(async () => {
  await browser?.deleteSession()
})

function brightFraction(pngBytes) {
  const png = PNG.sync.read(pngBytes)
  let bright = 0
  for (let i = 0; i < png.data.length; i += 4) {
    const luma = 0.299 * png.data[i] + 0.587 * png.data[i + 1] + 0.114 * png.data[i + 2]
    if (luma > BACKGROUND_LUMA) bright++
  }
  return { fraction: bright / (png.width * png.height), width: png.width, height: png.height }
}

test('first start lists the demo study: at least 12 cases across all five disease groups', async () => {
  // The start screen is the reader picker alone: nothing of the cases beside it.
  await browser.$('[data-testid="start-hint"]').waitForExist({ timeout: FIRST_START_TIMEOUT_MS, interval: 500 })
  assert.equal((await browser.$$('.case-row').length), 0, 'no case listed beside the reader picker')
  await backToCaseList(browser, { atLeast: 12 })
  const groups = new Set(await browser.$$('[data-testid="disease-group"]').map((el) => el.getText()))
  for (const group of DISEASE_GROUPS) assert.ok(groups.has(group), `disease group ${group} is listed`)
  await browser.saveScreenshot(join(ARTIFACTS, 'overview.png'))
})

test('opening a case shows an axial image with its overlay beside a response rationale', async () => {
  const firstRow = await browser.$('.case-row')
  const caseId = await firstRow.getAttribute('data-case-id')
  await firstRow.$('button').click()

  const viewer = await browser.$('[data-testid="viewer"]')
  await viewer.waitForExist({ timeout: IMAGE_TIMEOUT_MS })
  await browser.waitUntil(async () => (await viewer.getAttribute('data-state')) !== 'loading', {
    timeout: IMAGE_TIMEOUT_MS,
    timeoutMsg: `case ${caseId}: the image never finished loading`,
  })
  assert.equal(await viewer.getAttribute('data-state'), 'ready', await viewer.getText())

  const activeSeries = await browser.$('.series-tabs button.active').getText()
  assert.equal(await browser.$('[data-testid="series-label"]').getText(), activeSeries)
  const position = await browser.$('[data-testid="slice-position"]').getText()
  const match = /^Slice (\d+)\/(\d+)$/.exec(position)
  assert.ok(match, `slice overlay reads "${position}"`)
  const [slice, nSlices] = [Number(match[1]), Number(match[2])]
  assert.ok(nSlices > 1 && slice >= 1 && slice <= nSlices, position)
  assert.match(await browser.$('[data-testid="window-level"]').getText(), /^W \S+ +L \S+$/)

  const rationale = await browser.$('[data-testid="rationale"]')
  await rationale.waitForExist({ timeout: IMAGE_TIMEOUT_MS })
  assert.ok((await rationale.getText()).trim().length > 20, 'a rationale is shown')

  // Give WebGL a frame, then read back what is actually on screen.
  await browser.pause(300)
  const canvas = await browser.$('[data-testid="viewer"] canvas')
  const shot = Buffer.from(await browser.takeElementScreenshot(canvas.elementId), 'base64')
  writeFileSync(join(ARTIFACTS, 'viewer-canvas.png'), shot)
  const { fraction, width, height } = brightFraction(shot)
  assert.ok(
    fraction > MIN_IMAGE_FRACTION,
    `only ${(100 * fraction).toFixed(1)} % of the ${width}×${height} canvas is non-background`,
  )
  await browser.saveScreenshot(join(ARTIFACTS, 'case-view.png'))

  const firstImageMs = await browser.execute(
    () => performance.getEntriesByName('open-case-to-first-image', 'measure')[0]?.duration ?? null,
  )
  assert.ok(typeof firstImageMs === 'number', 'the UI measured open case → first image')
  writeFileSync(join(ARTIFACTS, 'timings.json'), JSON.stringify({ caseId, openCaseToFirstImageMs: firstImageMs }, null, 2))
  console.log(`open case ${caseId} → first image: ${firstImageMs.toFixed(0)} ms`)

  // Arrow keys move through slices, and the overlay follows.
  await canvas.click()
  await browser.keys(slice < nSlices ? 'ArrowUp' : 'ArrowDown')
  const expected = slice < nSlices ? slice + 1 : slice - 1
  await browser.waitUntil(
    async () => (await browser.$('[data-testid="slice-position"]').getText()) === `Slice ${expected}/${nSlices}`,
    { timeout: 5_000, timeoutMsg: `arrow key did not move from slice ${slice} to ${expected}` },
  )
})
