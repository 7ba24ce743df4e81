// Rubric versions in the real window (WebKitGTK through tauri-driver). The study lead opens the
// rubric editor from the case list: an edit made while no rating was saved under the current
// version changes that version in place; a rater then saves a rating, which records the version;
// the lead's next edit becomes a new version, the rating keeping its own. A problem is shown
// beside its field and nothing is saved. Run through scripts/e2e.sh (display, driver,
// NEURORATER_DB).
//
// Other files of the run rate the demo study too, so the version this file starts from may
// already hold ratings: then its first edit is itself a new version, and the rest follows from
// there. The rubric and the versions are put back at the end (as rubric.test.mjs puts its
// rubric back), so the files after this one read the demo study as it was.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  DB,
  FIRST_START_TIMEOUT_MS,
  LOAD_TIMEOUT_MS,
  backToCaseList,
  becomeNewRater,
  currentRater,
  openFromQueue,
  openSession,
  screenshots,
  testid,
  waitSaved,
} from './support.mjs'

const RATER = 'Dr Vera Versteeg'
// scripts/e2e.sh builds the CLI beside the app.
const CLI = join(process.env.CARGO_TARGET_DIR ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'target'), 'debug', 'neurorater')
const REPORT_TIMEOUT_MS = 240_000
const STUDY = 'neurorater-demo'

let browser
/** The study's rubric and version as this file found them, put back at the end. */
let found = null
/** The version the lead's in-place edit is made on, and the rating made under it. */
const state = {}

const sql = (query) => execFileSync('sqlite3', ['-json', DB, query]).toString().trim()
const rows = (query) => JSON.parse(sql(query) || '[]')
const quoted = (text) => `'${text.replaceAll("'", "''")}'`
const studyRow = () => rows(`SELECT id, rubric_json, rubric_version FROM studies WHERE study_id = '${STUDY}'`)[0]

before(async () => {
  browser = await openSession()
})

after(async () => {
  if (found !== null) {
    // Test cleanup, not a path the app offers: the study's rubric and version as found, the
    // versions this file added removed, and the ratings saved under them counted as before.
    sql(
      `UPDATE studies SET rubric_json = ${quoted(found.rubric_json)}, rubric_version = ${found.rubric_version}
         WHERE id = ${found.id};
       DELETE FROM rubric_versions WHERE study = ${found.id} AND version > ${found.rubric_version};
       UPDATE ratings SET rubric_version = ${found.rubric_version} WHERE rubric_version > ${found.rubric_version};`,
    )
  }
  // Back on the study's case list out of reading mode, as rubric.test.mjs ends: the next file's
  // app starts where this one left.
  // The session ends even when the way back fails: left open, it would refuse every later
  // file's session ("Maximum number of active sessions").
  try {
    if (browser) await backToCaseList(browser)
  } finally {
    await browser?.deleteSession().catch(() => {})
  }
})

const shot = (name) => screenshots(browser, 'rubric_versions')(name)
const $ = (selector) => browser.$(selector)

async function openEditor() {
  await backToCaseList(browser)
  await $(testid('open-rubric-editor')).click()
  await $(testid('rubric-version')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
}

/** The editor's version line: { version, ratings }. */
async function shownVersion() {
  const line = await $(testid('rubric-version'))
  return { version: Number(await line.getAttribute('data-version')), ratings: Number(await line.getAttribute('data-ratings')) }
}

async function save(expectedStatus) {
  const status = await $(testid('rubric-status'))
  const before = (await status.isExisting()) ? await status.getText() : null
  await $(testid('rubric-save')).click()
  await browser.waitUntil(async () => (await status.isExisting()) && (await status.getText()) !== before, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `saving the rubric never reported (expected "${expectedStatus}")`,
  })
  assert.equal(await status.getText(), expectedStatus)
}

async function describeFirstDimension(text) {
  const description = await $(`${testid('rubric-dimension')}[data-index="0"] ${testid('dimension-description')}`)
  await description.setValue(text)
}

/** The version line and the edited (first) dimension in sight for a screenshot; Save and its
 * outcome stay at the bottom. */
async function showFirstDimension() {
  await (await $(testid('rubric-editor'))).scrollIntoView({ block: 'start' })
  await browser.pause(300)
}

test('the lead edits a dimension before any rating under the version: the version stays', async () => {
  await backToCaseList(browser, { timeout: FIRST_START_TIMEOUT_MS })
  found = studyRow()
  await openEditor()
  let { version, ratings } = await shownVersion()
  assert.equal(version, found.rubric_version)
  if (ratings > 0) {
    // Earlier files rated under this version: the first edit is the next version.
    await describeFirstDimension('Is the finding named right?')
    const word = ratings === 1 ? 'rating was' : 'ratings were'
    await save(`Saved as new version ${version + 1} — ${ratings} ${word} made under version ${version}`)
    ;({ version, ratings } = await shownVersion())
    assert.equal(ratings, 0)
  }
  state.version = version

  await describeFirstDimension('Is every finding named, with its site and side?')
  await save(`Saved (version ${version})`)
  assert.deepEqual(await shownVersion(), { version, ratings: 0 })
  await showFirstDimension()
  await shot('1-edited-in-place')

  const stored = studyRow()
  assert.equal(stored.rubric_version, version)
  assert.equal(JSON.parse(stored.rubric_json).dimensions[0].description, 'Is every finding named, with its site and side?')
  const versions = rows(`SELECT version, rubric_json FROM rubric_versions WHERE study = ${stored.id} ORDER BY version`)
  assert.equal(versions.at(-1).version, version, 'an in-place edit adds no version')
  assert.equal(JSON.parse(versions.at(-1).rubric_json).dimensions[0].description, 'Is every finding named, with its site and side?')
})

test('a problem is shown beside its field and nothing is saved', async () => {
  const name = await $(`${testid('rubric-dimension')}[data-index="0"] ${testid('dimension-label')}`)
  const kept = await name.getValue()
  await name.setValue(' ')
  await save('Not saved: see the fields marked above.')
  const problem = await $(`${testid('problem')}[data-field="rubric.dimensions[0].label"]`)
  assert.ok(await problem.isDisplayed(), 'the problem is shown at the name')
  assert.match(await problem.getText(), /name/)
  await browser.pause(300)
  await shot('2-problem-beside-field')
  assert.equal(JSON.parse(studyRow().rubric_json).dimensions[0].label, kept, 'nothing was saved')
  await name.setValue(kept)
})

test('a rater sees the description and saves a rating, recorded under the version', async () => {
  await $(testid('mode-reading')).click()
  await becomeNewRater(browser, RATER, 'neuroradiologist', 11)
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  const [rater] = rows(`SELECT id FROM raters WHERE name = '${RATER}'`)
  const [first] = rows(
    `SELECT a.id FROM assignments a JOIN assignment_plans p ON a.plan = p.id
      WHERE a.rater = ${rater.id} AND (a.not_before IS NULL OR a.not_before <= date('now'))
      ORDER BY p.id, a.position LIMIT 1`,
  )
  await openFromQueue(browser, first.id, 'rubric')
  const description = await $(testid('dimension-description'))
  assert.equal(await description.getText(), 'Is every finding named, with its site and side?')
  await description.scrollIntoView({ block: 'center' })
  await browser.pause(300)
  await shot('3-description-for-the-rater')
  const dimension = JSON.parse(studyRow().rubric_json).dimensions[0].id
  await $(`[data-testid="rubric-row"][data-row="${dimension}"] button.level`).click()
  await waitSaved(browser, 'a score')
  await browser.pause(300)
  await shot('4-rated')

  const saved = rows(
    `SELECT g.id, g.rubric_version FROM ratings g
       JOIN assignments a ON a.response = g.response AND a.rater = g.rater AND a.read_no = g.read_no
      WHERE a.id = ${first.id}`,
  )
  assert.equal(saved.length, 1)
  assert.equal(saved[0].rubric_version, state.version)
  state.rating = saved[0].id
})

test('after that rating, the lead’s edit is a new version and the rating keeps its own', async () => {
  await openEditor()
  assert.deepEqual(await shownVersion(), { version: state.version, ratings: 1 })
  await describeFirstDimension('Is every lesion named, with its site, side and size?')
  await save(`Saved as new version ${state.version + 1} — 1 rating was made under version ${state.version}`)
  assert.deepEqual(await shownVersion(), { version: state.version + 1, ratings: 0 })
  await showFirstDimension()
  await shot('5-new-version')

  const stored = studyRow()
  assert.equal(stored.rubric_version, state.version + 1)
  const versions = rows(`SELECT version, rubric_json FROM rubric_versions WHERE study = ${stored.id} ORDER BY version`)
  assert.deepEqual(versions.slice(-2).map((v) => [v.version, JSON.parse(v.rubric_json).dimensions[0].description]), [
    [state.version, 'Is every finding named, with its site and side?'],
    [state.version + 1, 'Is every lesion named, with its site, side and size?'],
  ])
  const [rating] = rows(`SELECT rubric_version FROM ratings WHERE id = ${state.rating}`)
  assert.equal(rating.rubric_version, state.version, 'the rating keeps the version it was saved under')
  const audit = rows(`SELECT action FROM audit_log WHERE entity = 'study:${STUDY}' AND action LIKE '%rubric%' ORDER BY id`)
  assert.equal(audit.at(-1).action, 'new rubric version')
  await $(testid('rubric-editor-close')).click()
  await $(testid('case-table')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
})

test('the lead removes the dimension the rater scored: the draft opens without it, says so, and is saved under the current version', async () => {
  await openEditor()
  const current = state.version + 1
  assert.deepEqual(await shownVersion(), { version: current, ratings: 0 })
  const dimension = JSON.parse(studyRow().rubric_json).dimensions[0]
  state.removed = dimension.id
  await $(`${testid('rubric-dimension')}[data-index="0"] ${testid('dimension-remove')}`).click()
  await save(`Saved (version ${current})`)
  await $(testid('rubric-editor-close')).click()
  await $(testid('case-table')).waitForExist({ timeout: LOAD_TIMEOUT_MS })

  await $(testid('mode-reading')).click()
  const choice = await $(`button.rater-choice*=${RATER}`)
  await choice.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: `${RATER} is not on the picker` })
  await choice.click()
  await browser.waitUntil(async () => (await currentRater(browser)) === RATER, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `${RATER} never became the current rater`,
  })
  const [{ id: assignment }] = rows(
    `SELECT a.id FROM assignments a JOIN ratings g ON a.response = g.response AND a.rater = g.rater AND a.read_no = g.read_no
      WHERE g.id = ${state.rating}`,
  )
  // The app returns the rater to the item they had open (this one, since the rating above).
  const reading = await $(testid('reading'))
  await browser.waitUntil(async () => (await reading.getAttribute('data-assignment')) === String(assignment), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `the rater was not returned to assignment ${assignment}`,
  })
  const notice = await $(testid('outdated-scores'))
  await notice.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the removed score was taken out without a word' })
  assert.ok(await $(`${testid('outdated-scores')} [data-field="dimensions.${dimension.id}"]`).isExisting())
  assert.match(await notice.getText(), new RegExp(dimension.id))
  assert.ok(!(await $(`[data-testid="rubric-row"][data-row="${dimension.id}"]`).isExisting()), 'the removed dimension has no row')
  // The screen saves the draft without it by itself, under the current version.
  const stored = () => rows(`SELECT dimensions_json, rubric_version FROM ratings WHERE id = ${state.rating}`)[0]
  await browser.waitUntil(async () => stored().rubric_version === current, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `the draft was never saved under version ${current} (${JSON.stringify(stored())})`,
  })
  assert.ok(!(dimension.id in JSON.parse(stored().dimensions_json)), stored().dimensions_json)
  await waitSaved(browser, 'the draft without the removed score')
  await notice.scrollIntoView({ block: 'center' })
  await browser.pause(300)
  await shot('6-outdated-score-removed')
})

// Issue 41, finding 1: allowing "not applicable" on a dimension after ratings were made made a new
// version, and Calibration then said "no human raters besides the grader" for every rating. Each
// dimension now reads every rating whose version defines it as the current one does; the removed
// dimension's scores are left out, and the view says so.
test('after the lead allows "not applicable", Calibration still has its verdict and says what it left out', async () => {
  await openEditor()
  const removed = state.removed
  const allow = await $(`${testid('rubric-dimension')}[data-index="0"] ${testid('dimension-allow-na')}`)
  assert.equal(await allow.isSelected(), false)
  await allow.click()
  await $(testid('rubric-save')).click()
  const status = await $(testid('rubric-status'))
  await browser.waitUntil(async () => (await status.isExisting()) && /^Saved/.test(await status.getText()), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'allowing "not applicable" was never saved',
  })
  assert.equal(JSON.parse(studyRow().rubric_json).dimensions[0].allow_not_applicable, true)
  await $(testid('rubric-editor-close')).click()
  await $(testid('case-table')).waitForExist({ timeout: LOAD_TIMEOUT_MS })

  await $(testid('mode-calibration')).click()
  await browser.waitUntil(
    async () => (await $(testid('calibration-view')).isExisting()) || (await $(testid('leave-reading')).isExisting()),
    { timeout: 30_000, timeoutMsg: 'neither the calibration view nor the reading gate appeared' },
  )
  const leave = await $(testid('leave-reading'))
  if (await leave.isExisting()) await leave.click()
  await $(testid('calibration-complete')).waitForExist({ timeout: REPORT_TIMEOUT_MS, timeoutMsg: 'the whole report never arrived' })
  const verdict = await $(testid('verdict'))
  assert.ok(await verdict.isExisting(), 'a verdict, not "no human raters besides the grader"')
  const r = Number(await $(testid('headline-r')).getAttribute('data-r'))
  assert.ok(Number.isFinite(r), `the headline r is a number (${r})`)

  // The same report from the command line on the same database.
  assert.ok(existsSync(CLI), `build the CLI beside the app first (scripts/e2e.sh does): no ${CLI}`)
  const grader = await $(testid('grader-picker')).getValue()
  const others = (await browser.$$(`${testid('grader-picker')} option`).map((o) => o.getAttribute('value'))).filter((g) => g !== grader)
  const args = ['calibrate', '--db', DB, '--grader', grader, '--seed', '1', '--resamples', '2000']
  for (const other of others) args.push('--other-grader', other)
  const cli = JSON.parse(execFileSync(CLI, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }))
  assert.equal(r, cli.verdict.pearson.r)
  assert.equal(await verdict.getAttribute('data-standing'), { meets_bar: 'pass', estimate_meets_bar: 'partial', below_bar: 'fail', not_estimable: 'not-estimable' }[cli.verdict.standing])
  // Every clinician's score of the overall dimension is read: as many as the file holds.
  const [{ n: overall }] = rows(`SELECT count(*) AS n FROM ratings WHERE status = 'submitted' AND read_no = 1 AND overall IS NOT NULL`)
  assert.ok(overall > 0)
  assert.equal(cli.dimensions[0].dimension, 'overall')
  const scored = cli.dimensions[0].overall.human_human
  assert.ok(scored.raters.length > 0)
  // The removed dimension's scores, left out with why, as many as the file holds.
  const [{ n: removedScores }] = rows(
    `SELECT count(*) AS n FROM ratings WHERE status = 'submitted' AND read_no = 1
       AND json_extract(dimensions_json, '$.${removed}') IS NOT NULL`,
  )
  const cliLeftOut = cli.rubric_versions.flatMap((v) => v.left_out).filter((l) => l.dimension === removed)
  assert.equal(cliLeftOut.reduce((sum, l) => sum + l.scores, 0), removedScores)
  assert.ok(cliLeftOut.every((l) => l.reason.startsWith(`the current rubric has no dimension ${removed}`)))
  const shown = await browser.$$(`${testid('rubric-left-out')}[data-dimension="${removed}"]`)
  assert.equal(shown.length, cliLeftOut.length)
  assert.match(await shown[0].getText(), new RegExp(`the current rubric has no dimension ${removed}`))
  await $(testid('rubric-versions-read')).scrollIntoView({ block: 'center' })
  await browser.pause(300)
  await shot('7-calibration-after-allowing-na')
  await verdict.scrollIntoView({ block: 'start' })
  await browser.pause(300)
  await shot('8-calibration-verdict')
})
