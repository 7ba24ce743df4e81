// The app at a real study's size (issue 18): the demo multiplied to 2,304 responses
// (scripts/bench/make_scale_study.py), imported into a database of this test's own, opened in the
// real window. Measures the time to the first numbers on the Calibration tab and to the whole
// report, to the reading queue of 2,304, and to a case's first image; writes them to
// tests/e2e/artifacts/timings-scale.json (docs/performance.md keeps the figures) with
// screenshots of the progress state and of the filled report.
// Run: E2E_DRIVER_PORT=4470 E2E_TESTS=scale.test.mjs bash scripts/e2e.sh

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ARTIFACTS, LOAD_TIMEOUT_MS, becomeNewRater, openSession, screenshots, testid } from './support.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const TARGET = process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target')
const CLI = join(TARGET, 'debug', 'neurorater')
const RESPONSES = 2304
const REPORT_TIMEOUT_MS = 180_000
// How often the waits below look: the timings are this precise.
const POLL_MS = 50

let browser
let work
let shot
const timings = { responses: RESPONSES }

/** Runs `what`, returning its wall time in ms. */
function timed(what) {
  const started = Date.now()
  what()
  return Date.now() - started
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'neurorater-scale-e2e-'))
  // scripts/e2e.sh builds the CLI beside the app, with the app's features: building it alone here
  // would rebuild its dependencies with another feature set.
  assert.ok(existsSync(CLI), `build the CLI beside the app first (scripts/e2e.sh does): no ${CLI}`)
  const demo = join(work, 'demo')
  const bundle = join(work, 'scale')
  const db = join(work, 'scale.sqlite')
  const run = (file, args) => execFileSync(file, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  timings.setupMs = {
    demo: timed(() => run(CLI, ['demo', '--out', demo])),
    multiply: timed(() => {
      timings.study = JSON.parse(run('python3', [join(ROOT, 'scripts/bench/make_scale_study.py'), demo, bundle, '--responses', String(RESPONSES)]))
    }),
    import: timed(() => run(CLI, ['import', bundle, '--db', db])),
    importRatings: timed(() => run(CLI, ['import-ratings', join(bundle, 'ratings.csv'), '--db', db])),
  }
  assert.equal(timings.study.responses, RESPONSES)
  console.log('scale study:', JSON.stringify(timings))
  browser = await openSession(['--db', db])
  shot = screenshots(browser, 'scale')
})

after(async () => {
  writeFileSync(join(ARTIFACTS, 'timings-scale.json'), JSON.stringify(timings, null, 2))
  await browser?.deleteSession()
  if (work) rmSync(work, { recursive: true, force: true })
})

const exists = (id) => browser.$(testid(id)).isExisting()

test('the Calibration tab shows the verdict first, says what it is computing, then fills the report', async () => {
  const tab = await browser.$(testid('mode-calibration'))
  await tab.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  const started = Date.now()
  await tab.click()
  await browser.$(testid('headline-r')).waitForExist({ timeout: REPORT_TIMEOUT_MS, interval: POLL_MS })
  timings.calibrationFirstNumbersMs = Date.now() - started
  const firstR = await browser.$(testid('headline-r')).getAttribute('data-r')
  // The rest is still being computed, and the view says so with its progress. Read in one step in
  // the page: on a fast machine the whole report can land between two WebDriver calls, and the
  // progress line must be read together with the pending sections it describes.
  const pendingState = await browser.execute(() => {
    const progress = document.querySelector('[data-testid="calibration-progress"]')
    return progress === null
      ? null
      : { text: progress.textContent ?? '', sectionsPending: document.querySelector('[data-testid="section-pending"]') !== null }
  })
  timings.progressShownWithHeadline = pendingState !== null
  if (pendingState !== null) {
    assert.match(pendingState.text, /Verdict shown; computing .*(resamples|reading the study)/s, pendingState.text)
    assert.ok(pendingState.sectionsPending, 'the sections still being computed say so')
    if (await exists('calibration-progress')) await shot('1-progress')
  }
  await browser.$(testid('calibration-complete')).waitForExist({ timeout: REPORT_TIMEOUT_MS, interval: POLL_MS })
  timings.calibrationWholeReportMs = Date.now() - started
  // Where the time went, from the view's marks: its request, each answer received and painted.
  timings.calibrationMarksMs = await browser.execute(() => {
    const at = (name) => performance.getEntriesByName(`calibration-${name}`).at(-1)?.startTime ?? null
    const start = at('request')
    const since = (name) => (at(name) === null || start === null ? null : Math.round(at(name) - start))
    return Object.fromEntries(['headline-received', 'headline-painted', 'complete-received', 'complete-painted'].map((n) => [n, since(n)]))
  })
  assert.equal(await browser.$(testid('headline-r')).getAttribute('data-r'), firstR, 'the headline is the whole report’s to the bit')
  assert.ok(!(await exists('section-pending')), 'every section is filled')
  assert.ok((await browser.$(testid('verdict-summary')).getText()).length > 40)
  const subgroupRows = await browser.$$('[data-testid="subgroup-table"] .subgroup-row').length
  assert.ok(subgroupRows > 10, `every subgroup has its row (${subgroupRows})`)
  assert.match(await browser.$('[data-testid="subgroup-table"] .subgroup-row:nth-child(2) [data-testid="vs-rest"]').getText(), /\)|not tested/)
  assert.ok(await exists('variance-table'))
  await shot('2-report')
  await browser.$(testid('subgroup-table')).scrollIntoView()
  await shot('3-subgroups')
  console.log(`calibration: first numbers ${timings.calibrationFirstNumbersMs} ms, whole report ${timings.calibrationWholeReportMs} ms`)
})

test('another grader never blanks the page, a build can be cancelled, and a kept report comes back at once', async () => {
  const picker = await browser.$(testid('grader-picker'))
  const graders = await browser.$$(`${testid('grader-picker')} option`).map((o) => o.getAttribute('value'))
  assert.ok(graders.length >= 2, `the demo has two grader versions (${graders})`)
  const [first, second] = graders
  await picker.selectByAttribute('value', second)
  // The last report stays on screen while the new one is built.
  assert.ok(await exists('report-body'), 'the page is not blank while the other grader’s report is built')
  await browser.$(testid('cancel-report')).waitForExist({ timeout: 10_000, interval: POLL_MS })
  await browser.$(testid('cancel-report')).click()
  await browser.$(testid('report-stopped')).waitForExist({ timeout: 30_000, interval: POLL_MS })
  assert.ok(await exists('report-body'), 'a cancel keeps what was shown')
  assert.ok(!(await exists('calibration-progress')))
  await shot('4-cancelled')

  // The first grader's report was kept: choosing it again shows it without building.
  const started = Date.now()
  await picker.selectByAttribute('value', first)
  await browser.$(testid('calibration-complete')).waitForExist({ timeout: REPORT_TIMEOUT_MS, interval: POLL_MS })
  timings.calibrationKeptReportMs = Date.now() - started
  assert.match(await browser.$(testid('calibration-complete')).getText(), /Kept from the last build/)
})

test('a new rater’s queue of 2,304 responses opens, and so does its first response', async () => {
  await browser.$(testid('mode-reading')).click()
  const started = Date.now()
  await becomeNewRater(browser, 'Dr Scale', 'neuroradiologist', 9)
  await browser.$(testid('queue-row')).waitForExist({ timeout: LOAD_TIMEOUT_MS, interval: POLL_MS })
  timings.newRaterToQueueMs = Date.now() - started
  assert.equal(await browser.$(testid('queue-progress')).getProperty('max'), RESPONSES)
  // Only the rows in view are in the page; scrolling to the end brings the last ones in.
  const scroller = await browser.$(testid('queue-scroller'))
  assert.equal(Number(await scroller.getAttribute('data-rows')), RESPONSES)
  const rendered = await browser.$$(testid('queue-row')).length
  assert.ok(rendered < 200, `the queue renders the rows in view, not all ${RESPONSES} (${rendered})`)
  timings.queueRowsInPage = rendered
  // Scrolled to the end, the last response's row is in the page by the next frames.
  timings.queueScrollToEndMs = await browser.executeAsync((last, done) => {
    const box = document.querySelector('[data-testid="queue-scroller"]')
    const t0 = performance.now()
    box.scrollTop = box.scrollHeight
    const wait = () => {
      const cells = [...document.querySelectorAll('[data-testid="queue-row"] td:first-child')]
      if (cells.some((td) => td.textContent === String(last))) requestAnimationFrame(() => done(performance.now() - t0))
      else requestAnimationFrame(wait)
    }
    requestAnimationFrame(wait)
  }, RESPONSES)
  await shot('5-queue-end')
  await browser.execute(() => {
    document.querySelector('[data-testid="queue-scroller"]').scrollTop = 0
  })
  await shot('5-queue')
  const opened = Date.now()
  await browser.$(testid('continue')).click()
  await browser.$('[data-testid="viewport"][data-state="ready"]').waitForExist({ timeout: LOAD_TIMEOUT_MS, interval: POLL_MS })
  timings.queueToFirstResponseImageMs = Date.now() - opened
  await shot('6-first-response')
})

test('a case of 96 opens from the case list to its first image', async () => {
  // The reader chosen above reads blinded: a study lead leaves reading mode to browse cases.
  await browser.$(testid('mode-cases')).click()
  const leave = await browser.$(testid('leave-reading'))
  if (await leave.isExisting()) await leave.click()
  await browser.waitUntil(async () => (await browser.$$('.case-row').length) >= timings.study.cases, {
    timeout: LOAD_TIMEOUT_MS,
    interval: POLL_MS,
    timeoutMsg: 'the case list never showed every case',
  })
  const row = await browser.$('.case-row[data-case-id$="-x8"]')
  await row.scrollIntoView()
  await row.$('button').click()
  // This opening's measure: it starts at the click's mark (App.svelte's openCase).
  await browser.waitUntil(
    () =>
      browser.execute(() => {
        const click = performance.getEntriesByName('open-case', 'mark')[0]
        const measured = performance.getEntriesByName('open-case-to-first-image').at(-1)
        return Boolean(click && measured && measured.startTime === click.startTime)
      }),
    { timeout: LOAD_TIMEOUT_MS, interval: POLL_MS, timeoutMsg: 'the case’s first image was never measured' },
  )
  timings.openCaseToFirstImageMs = await browser.execute(() => performance.getEntriesByName('open-case-to-first-image').at(-1).duration)
  await shot('7-case')
  console.log('scale timings:', JSON.stringify(timings))
})
