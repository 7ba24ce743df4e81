// Measuring in the real window: a distance and an ellipse ROI drawn on the demo CT (stroke-02),
// their values read as shown. The values themselves are checked against pydicom + numpy in
// cases/tests/curation.rs; here, that what is shown is the backend's value for what was drawn,
// live while drawing, and how long each request took (artifacts/timings-measure.json).
// Run: E2E_DRIVER_PORT=4610 E2E_TESTS=measure.test.mjs bash scripts/e2e.sh

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ARTIFACTS, FIRST_START_TIMEOUT_MS, backToCaseList, openSession, screenshots } from './support.mjs'

const IMAGE_TIMEOUT_MS = 60_000
/** Values are shown to 0.1 mm. */
const SHOWN_MM = 0.05 + 1e-9

let browser
const shoot = async (name) => {
  await browser.pause(250)
  await screenshots(browser, 'measure')(name)
}

before(async () => {
  browser = await openSession()
  await backToCaseList(browser, { timeout: FIRST_START_TIMEOUT_MS, atLeast: 12 })
  const row = await browser.$('.case-row[data-case-id="stroke-02"]')
  await row.$('button').click()
  await browser.waitUntil(async () => (await browser.$('[data-testid="viewport"]').getAttribute('data-state')) === 'ready', {
    timeout: IMAGE_TIMEOUT_MS,
    timeoutMsg: 'the CT never loaded',
  })
})

after(async () => {
  if (browser) {
    const timings = await browser.execute(() =>
      performance
        .getEntriesByType('measure')
        .filter((m) => m.name.startsWith('measure-'))
        .map((m) => m.duration),
    )
    const sorted = [...timings].sort((a, b) => a - b)
    writeFileSync(
      join(ARTIFACTS, 'timings-measure.json'),
      JSON.stringify({ requests: timings.length, medianMs: sorted[Math.floor(sorted.length / 2)] ?? null, maxMs: sorted.at(-1) ?? null }, null, 2),
    )
  }
  await browser?.deleteSession()
})

/** The shown measurement's lines and the LPS points it was drawn with. */
async function shown() {
  await browser.waitUntil(async () => (await browser.$$('[data-testid="measurement"]').length) > 0, {
    timeout: 10_000,
    timeoutMsg: 'no measurement is shown',
  })
  return browser.execute(() => {
    const groups = [...document.querySelectorAll('[data-testid="mark"][data-points-lps]')]
    const last = groups.at(-1)
    return {
      lines: [...(last?.querySelectorAll('[data-testid="measurement"] tspan') ?? [])].map((t) => t.textContent),
      points: JSON.parse(last?.getAttribute('data-points-lps') ?? '[]'),
    }
  })
}

const length = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2])

test('a distance shows its length in mm while drawn and once drawn', async () => {
  await browser.$('[data-testid="measure-distance"]').click()
  const layer = await browser.$('[data-testid="viewport"] svg.marks')
  // Held down mid-stroke: the value is already shown, live.
  await browser.action('pointer').move({ origin: layer, x: -60, y: -20 }).down().move({ origin: layer, x: 10, y: 25 }).perform(true)
  await browser.waitUntil(
    async () => (await browser.$$('[data-testid="measurement"]').length) > 0,
    { timeout: 5_000, timeoutMsg: 'no value while drawing' },
  )
  await shoot('1-drawing-distance')
  await browser.action('pointer').move({ origin: layer, x: 40, y: 30 }).up().perform()
  const { lines, points } = await shown()
  assert.equal(points.length, 2)
  const [, value] = /^([\d.]+) mm$/.exec(lines[0] ?? '') ?? []
  assert.ok(value, `a length in mm is shown: ${JSON.stringify(lines)}`)
  assert.ok(Math.abs(Number(value) - length(points[0], points[1])) <= SHOWN_MM, `${value} mm shown for ${JSON.stringify(points)}`)
  assert.ok(Number(value) > 10, `a drag of ~100 px on a 230 mm field is more than 10 mm: ${value}`)
  await shoot('2-distance')
})

test('an ellipse ROI shows HU statistics, pixels, area and its RANO diameters', async () => {
  await browser.$('[data-testid="measure-ellipse"]').click()
  const layer = await browser.$('[data-testid="viewport"] svg.marks')
  await browser.action('pointer').move({ origin: layer, x: 30, y: -40 }).down().move({ origin: layer, x: 70, y: -15 }).up().perform()
  await browser.waitUntil(async () => (await shown()).lines.length === 4, { timeout: 10_000, timeoutMsg: 'the ROI values never came' })
  const { lines, points } = await shown()
  const [, mean] = /^mean (-?[\d.]+) HU · SD [\d.]+$/.exec(lines[0]) ?? []
  assert.ok(mean !== undefined, `mean in HU: ${lines[0]}`)
  assert.ok(Number(mean) > -100 && Number(mean) < 100, `brain-like HU inside the head: ${mean}`)
  assert.match(lines[2], /^\d+ px · [\d.]+ mm²$/)
  // Drawn on the screen's axes, the semi-axes are perpendicular: the diameters are twice each.
  const [, longest, perpendicular] = /^([\d.]+) × ([\d.]+) mm/.exec(lines[3]) ?? []
  const semi = [length(points[0], points[1]), length(points[0], points[2])].sort((a, b) => b - a)
  assert.ok(Math.abs(Number(longest) - 2 * semi[0]) <= SHOWN_MM, `${lines[3]} for semi-axes ${semi}`)
  assert.ok(Math.abs(Number(perpendicular) - 2 * semi[1]) <= SHOWN_MM, `${lines[3]} for semi-axes ${semi}`)
  await shoot('3-ellipse')
  // Escape clears the measurements.
  await browser.$('[data-testid="viewer"]').click()
  await browser.keys(['Escape'])
  await browser.waitUntil(async () => (await browser.$$('[data-testid="measurement"]').length) === 0, {
    timeout: 5_000,
    timeoutMsg: 'Escape left the measurements',
  })
})
