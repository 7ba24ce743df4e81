// Drives the real NeuroRater window to the calibration view on the demo study (whose clinicians'
// ratings first start imports) and checks its numbers against `neurorater calibrate`, run here on
// the same database with the same grader, seed and resamples.
// Run through scripts/e2e.sh, which provides the display, the driver and NEURORATER_DB.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ARTIFACTS, DB, openSession } from './support.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const TARGET = process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target')
const CLI = join(TARGET, 'debug', 'neurorater')
// First start writes and imports the whole demo study; a debug build on 2 shared cores is slow.
const FIRST_START_TIMEOUT_MS = 300_000
const REPORT_TIMEOUT_MS = 180_000
// The app's defaults (ReportOptions::default): the CLI is given the same.
const SEED = '1'
const RESAMPLES = '2000'

let browser
let work

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'neurorater-calibration-e2e-'))
  // scripts/e2e.sh builds the CLI beside the app, with the app's features: building it alone here
  // would rebuild its dependencies with another feature set.
  assert.ok(existsSync(CLI), `build the CLI beside the app first (scripts/e2e.sh does): no ${CLI}`)
  browser = await openSession()
})

after(async () => {
  await browser?.deleteSession()
  if (work) rmSync(work, { recursive: true, force: true })
})

function calibrate(grader, others, excluded = [], extra = []) {
  const args = ['calibrate', '--db', DB, '--grader', grader, '--seed', SEED, '--resamples', RESAMPLES]
  for (const other of others) args.push('--other-grader', other)
  for (const name of excluded) args.push('--exclude-rater', name)
  args.push(...extra)
  return JSON.parse(execFileSync(CLI, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }))
}

const fixed = (v, d = 3) => v.toFixed(d).replace('-', '−')

let cli
let graderName
let otherGraders

test('the calibration view shows the report neurorater calibrate prints for the same ratings', async () => {
  const tab = await browser.$('[data-testid="mode-calibration"]')
  await tab.waitForExist({ timeout: FIRST_START_TIMEOUT_MS, timeoutMsg: 'the Calibration tab never appeared' })
  let started = Date.now()
  await tab.click()
  // A clinician an earlier test file left as the current reader keeps the view closed: a study
  // lead leaves reading mode first, as in the app (audited).
  await browser.waitUntil(
    async () =>
      (await browser.$('[data-testid="calibration-view"]').isExisting()) ||
      (await browser.$('[data-testid="leave-reading"]').isExisting()),
    { timeout: 30_000, timeoutMsg: 'neither the calibration view nor the reading gate appeared' },
  )
  const leave = await browser.$('[data-testid="leave-reading"]')
  if (await leave.isExisting()) {
    started = Date.now()
    await leave.click()
  }
  const headline = await browser.$('[data-testid="headline-r"]')
  await headline.waitForExist({ timeout: REPORT_TIMEOUT_MS, timeoutMsg: 'the calibration report never arrived' })
  console.log(`calibration headline in the window after ${Date.now() - started} ms`)
  // The headline comes first; the summary (its alternative annotator test is corrected over the
  // whole report) and the other sections follow with the whole report.
  await browser.$('[data-testid="calibration-complete"]').waitForExist({ timeout: REPORT_TIMEOUT_MS, timeoutMsg: 'the whole report never arrived' })
  console.log(`calibration report in the window after ${Date.now() - started} ms`)
  await browser.saveScreenshot(join(ARTIFACTS, 'calibration.png'))

  const picker = await browser.$('[data-testid="grader-picker"]')
  const grader = await picker.getValue()
  const graders = await browser.$$('[data-testid="grader-picker"] option').map((o) => o.getAttribute('value'))
  assert.ok(graders.length >= 1 && graders.includes(grader), `graders ${graders}, chosen ${grader}`)
  graderName = grader
  otherGraders = graders.filter((g) => g !== grader)
  cli = calibrate(grader, otherGraders)

  // The matcher's section, row for row the CLI's: each model, then its task families × levels.
  const accuracy = cli.answer_accuracy
  assert.ok(accuracy?.length > 0, 'the demo’s report matches its answers against the curated truth')
  const accuracyTable = await browser.$('[data-testid="answer-accuracy-table"]')
  await accuracyTable.scrollIntoView()
  const shownAccuracy = await browser.execute(() =>
    [...document.querySelectorAll('[data-testid="answer-accuracy-table"] tbody tr')].map((tr) =>
      [...tr.cells].map((td) => td.textContent.trim()),
    ),
  )
  assert.equal(shownAccuracy.length, accuracy.length)
  for (const [i, row] of accuracy.entries()) {
    assert.ok(shownAccuracy[i][0].startsWith(row.model), `${shownAccuracy[i][0]} is ${row.model}’s row`)
    assert.deepEqual([shownAccuracy[i][1], shownAccuracy[i][2]], [String(row.n), String(row.unmatched)])
    const top1 = row.top1.not_estimable ? '—' : `${(100 * row.top1.value).toFixed(0)} %`
    assert.ok(shownAccuracy[i][3].startsWith(top1), `top-1 ${shownAccuracy[i][3]}, the CLI’s ${top1}`)
  }
  await browser.saveScreenshot(join(ARTIFACTS, 'calibration-answer-accuracy.png'))

  const shownR = Number(await headline.getAttribute('data-r'))
  assert.equal(shownR, cli.verdict.pearson.r, 'headline r equals the CLI’s, to the last bit')
  assert.equal(await headline.getText(), fixed(cli.verdict.pearson.r))
  assert.equal(
    await browser.$('[data-testid="headline-lower-bound"]').getText(),
    fixed(cli.verdict.low),
  )
  // The bootstrap interval depends on the seed: the same seed gives the same interval.
  const boot = cli.dimensions[0].overall.grader.vs_human_mean.bootstrap.pearson_r
  assert.equal(
    await browser.$('[data-testid="bootstrap-interval"]').getText(),
    `percentile ${fixed(boot.percentile_low)} to ${fixed(boot.percentile_high)}`,
  )
  // The verdict's interval is the case jackknife on Fisher's z, shown beside the bootstrap.
  const jackknife = cli.dimensions[0].overall.grader.vs_human_mean.pearson_case_jackknife
  assert.equal(cli.verdict.low, jackknife.low, 'the verdict quotes the jackknife interval')
  assert.match(cli.verdict.method, /^delete-one-case jackknife on Fisher's z, t\(\d+\), \d+ cases$/)
  assert.equal(
    await browser.$('[data-testid="jackknife-interval"]').getText(),
    `${fixed(jackknife.low)} to ${fixed(jackknife.high)}`,
  )
  const standing = await browser.$('[data-testid="verdict"]').getAttribute('data-standing')
  const expected = cli.verdict.lower_bound_meets_bar ? 'pass' : cli.verdict.meets_bar ? 'partial' : 'fail'
  assert.equal(standing, expected)
  // The decision is read first, once; the summary below it goes on from there.
  assert.ok(cli.verdict.summary.startsWith(`${cli.verdict.decision} `), cli.verdict.summary)
  assert.equal(await browser.$('[data-testid="verdict-decision"]').getText(), cli.verdict.decision)
  assert.equal(await browser.$('[data-testid="verdict-summary"]').getText(), afterDecision(cli.verdict))
  // Four plots of the overall dimension, drawn as inline SVG.
  assert.equal(await browser.$$('[data-testid="plots"] svg').length, 4)
  await browser.$('[data-testid="plots"]').scrollIntoView()
  await browser.saveScreenshot(join(ARTIFACTS, 'calibration-plots.png'))
})

test('the filters show one dimension’s subgroups with their n, as in the report', async () => {
  const dimension = cli.dimensions.find((d) => d.dimension !== 'overall')
  assert.ok(dimension, 'the demo rubric has dimensions besides overall')
  await browser.$('[data-testid="dimension-filter"]').selectByAttribute('value', dimension.dimension)
  await browser.$('[data-testid="subgroup-filter"]').selectByVisibleText('model')
  const models = dimension.groups.filter((g) => g.column === 'model')
  const rows = await browser.$$('[data-testid="subgroup-table"] .subgroup-row')
  assert.equal(rows.length, 1 + models.length, 'all items, then one row per model')
  for (const [i, group] of models.entries()) {
    const cells = await rows[i + 1].$$('td').map((td) => td.getText())
    assert.equal(cells[0], `model = ${group.value}`)
    assert.equal(Number(cells[1]), group.section.n_items)
    assert.equal(cells[3], fixed(group.section.grader.vs_human_mean.pearson.r))
  }
  await browser.$('[data-testid="subgroup-table"]').scrollIntoView()
  await browser.saveScreenshot(join(ARTIFACTS, 'calibration-subgroups.png'))
})

test('the prediction-powered table shows the report’s PPI rows, figure for figure', async () => {
  assert.ok(cli.ppi.length > 0, 'the demo report has PPI rows')
  const table = await browser.$('[data-testid="ppi-table"]')
  await table.scrollIntoView()
  const rows = await browser.$$('[data-testid="ppi-table"] tbody tr')
  assert.equal(rows.length, cli.ppi.length, 'one row per model and target')
  // Each row as the report has it: the figures where estimable, else "not estimable" with the
  // report's reason on hover (the demo's clinicians read every answer: nothing for the grader to add).
  for (const [i, row] of cli.ppi.entries()) {
    const cells = await rows[i].$$('td').map((td) => td.getText())
    assert.equal(cells[0], row.model)
    if (typeof row.estimate === 'number') {
      assert.equal(cells[2], fixed(row.estimate, 2))
      assert.equal(cells[6], `${row.n_labelled} / ${row.n_unlabelled}`)
    } else {
      assert.equal(cells[2], 'not estimable')
      assert.equal(await rows[i].$('.na').getAttribute('title'), row.not_estimable)
    }
  }
  // Where no row is estimable for one reason, the reason is said once, not left to hover.
  const reasons = new Set(cli.ppi.map((row) => row.not_estimable))
  if (cli.ppi.every((row) => typeof row.estimate !== 'number') && reasons.size === 1) {
    assert.equal(await browser.$('[data-testid="ppi-reason"]').getText(), `Not estimable: ${cli.ppi[0].not_estimable}.`)
  }
  await browser.saveScreenshot(join(ARTIFACTS, 'calibration-ppi.png'))
})

test('the missed-findings and test-retest sections show what the report lists', async () => {
  // The demo's wrong lesion answers name the wrong place: the curation rule finds them.
  const missed = cli.missed_findings
  assert.ok(missed && missed.missed > 0, `the demo has missed findings: ${JSON.stringify(missed?.by_model)}`)
  const summary = await browser.$('[data-testid="missed-summary"]')
  await summary.scrollIntoView()
  assert.match(
    await summary.getText(),
    new RegExp(`${missed.missed} of ${missed.lesions_checked} lesion checks over ${missed.responses_checked} responses`),
  )
  assert.equal(await browser.$$('[data-testid="missed-by-model-table"] tbody tr').length, missed.by_model.length)
  const rows = await browser.$$('[data-testid="missed-findings-table"] .missed-row')
  assert.equal(rows.length, missed.findings.length, 'one row per missed lesion')
  const first = missed.findings[0]
  assert.deepEqual(await rows[0].$$('td').map((td) => td.getText()), [
    first.item,
    first.model,
    first.lesion_id,
    first.description,
    first.location,
  ])
  await browser.saveScreenshot(join(ARTIFACTS, 'calibration-missed-findings.png'))

  // The demo's imported ratings are first reads only: the section says there is nothing to compare.
  assert.equal(cli.intra_rater, null)
  const note = await browser.$('[data-testid="no-repeat-reads"]')
  assert.ok(await note.isExisting(), 'the view says why test-retest is missing')
  await note.scrollIntoView()
  await browser.saveScreenshot(join(ARTIFACTS, 'calibration-test-retest.png'))
})

test('export writes the report on screen to the chosen file, and refuses a path the dialog cannot give', async () => {
  // The native save dialog cannot be driven here; the command behind it is called as the button
  // does after the dialog returns a path.
  const target = join(work, 'report.json')
  const written = await browser.execute(
    (path) => window.__TAURI_INTERNALS__.invoke('export_calibration_report', { format: 'json', path }),
    target,
  )
  assert.deepEqual(written, [target])
  const exported = JSON.parse(readFileSync(target, 'utf8'))
  assert.equal(exported.verdict.pearson.r, cli.verdict.pearson.r)
  assert.deepEqual(
    exported.dimensions[0].overall.grader.vs_human_mean.bootstrap,
    cli.dimensions[0].overall.grader.vs_human_mean.bootstrap,
  )
  const refused = await browser.execute((path) =>
    window.__TAURI_INTERNALS__
      .invoke('export_calibration_report', { format: 'html', path })
      .then(() => null, (e) => e),
    'report.html',
  )
  assert.equal(refused?.code, 'invalid_argument', JSON.stringify(refused))
})

/** Clicks "Rebuild the report" and waits for the new report to be on screen. */
async function rebuild() {
  await browser.$('[data-testid="apply-choices"]').click()
  await browser.waitUntil(async () => !(await browser.$('[data-testid="calibration-progress"]').isExisting()), {
    timeout: REPORT_TIMEOUT_MS,
    timeoutMsg: 'the rebuilt report never arrived',
  })
  await browser.$('[data-testid="headline-r"]').waitForExist({ timeout: REPORT_TIMEOUT_MS })
}

const humanIcc2Cell = async () => (await browser.$$('[data-testid="human-table"] tbody tr')[1].$$('td'))[1].getText()

test('a partial reader leaves the ceiling estimable, and leaving a reader out changes the report and names them', async () => {
  // Reset the filters the earlier test chose: the human table shows the overall dimension.
  await browser.$('[data-testid="dimension-filter"]').selectByAttribute('value', 'overall')
  // A new reader part-way through: one rating, as a real study always has.
  const partial = 'e2e-partial-reader'
  const item = cli.missed_findings.findings[0].item
  const csv = join(work, 'partial-reader.csv')
  writeFileSync(csv, `item,rater,score\n${item},${partial},${cli.options.scale?.min ?? 1}\n`)
  execFileSync(CLI, ['import-ratings', csv, '--db', DB], { stdio: 'inherit' })
  await rebuild()

  const withPartial = calibrate(graderName, otherGraders)
  const human = withPartial.dimensions[0].overall.human_human
  assert.ok(human.raters.includes(partial), `the partial reader counts as a clinician: ${human.raters}`)
  assert.equal(typeof human.icc.ICC2.value, 'number', `ICC2 is estimable: ${JSON.stringify(human.icc.ICC2)}`)
  assert.equal(typeof human.fleiss_kappa.value, 'number', `Fleiss κ is estimable: ${JSON.stringify(human.fleiss_kappa)}`)
  assert.deepEqual(human.panel.left_out, [{ rater: partial, items_scored: 1 }])
  assert.equal(await humanIcc2Cell(), fixed(human.icc.ICC2.value))
  const panelNote = await browser.$('[data-testid="icc-panel"]').getText()
  assert.ok(panelNote.includes(`${partial} (1 items scored)`), panelNote)
  assert.equal(await browser.$('[data-testid="verdict-summary"]').getText(), afterDecision(withPartial.verdict))
  assert.notEqual(await browser.$('[data-testid="headline-ceiling"] .value').getText(), '—')
  await browser.$('[data-testid="report-choices"]').scrollIntoView()
  await browser.saveScreenshot(join(ARTIFACTS, 'calibration-partial-reader.png'))

  // The analyst leaves a full reader out and widens the margin: the report changes and says so.
  const leftOut = withPartial.summary.human_raters.find((r) => r !== partial)
  await browser.$(`[data-testid="reader-${leftOut}"]`).click()
  const margin = await browser.$('[data-testid="margin-input"]')
  await margin.setValue('0.1')
  await rebuild()
  const without = calibrate(graderName, otherGraders, [leftOut], ['--margin', '0.1'])
  assert.deepEqual(without.summary.excluded_raters, [leftOut])
  assert.ok(!without.dimensions[0].overall.human_human.raters.includes(leftOut))
  assert.match(await browser.$('[data-testid="excluded-readers"]').getText(), new RegExp(`left out by the analyst: ${leftOut}`))
  const summary = await browser.$('[data-testid="verdict-summary"]').getText()
  assert.equal(summary, afterDecision(without.verdict))
  assert.ok(summary.endsWith(`Left out by the analyst: ${leftOut}.`), summary)
  assert.match(await browser.$('[data-testid="headline-non-inferiority"]').getText(), /at margin 0\.10$/)
  const icc2 = without.dimensions[0].overall.human_human.icc.ICC2.value
  assert.notEqual(icc2, human.icc.ICC2.value, 'leaving a reader out changes the clinicians’ ICC')
  assert.equal(await humanIcc2Cell(), fixed(icc2))
  assert.ok(!(await browser.$(`[data-testid="reader-${leftOut}"]`).isSelected()), 'the checkbox shows the choice')
  await browser.$('[data-testid="report-choices"]').scrollIntoView()
  await browser.saveScreenshot(join(ARTIFACTS, 'calibration-reader-left-out.png'))
})

/** The verdict's summary as the card shows it: the decision above, the rest below. */
function afterDecision(verdict) {
  return verdict.summary.slice(verdict.decision.length).trimStart()
}
