// A rubric that fits each task in the real window (WebKitGTK through tauri-driver): the demo
// study's rubric, as a lead would set it, scores its first dimension on lesion identification only
// and lets a rater mark its second "not applicable". On a task of another family the first
// dimension is not shown; the rater marks the second N/A beside its scale, it is stored as its
// own state (not a number), and it is shown again after a reload; on a lesion-identification task
// the first dimension is there. Run through scripts/e2e.sh (display, driver, NEURORATER_DB).

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import {
  DB,
  LOAD_TIMEOUT_MS,
  backToCaseList,
  becomeNewRater,
  openFromQueue,
  openSession,
  screenshots,
  testid,
  waitSaved,
} from './support.mjs'

const RATER = 'Dr Rubi Rao'
const STUDY = 'neurorater-demo'

let browser
/** The study's rubric as stored before this file changed it, put back at the end. */
let storedRubric = null

const sql = (query) => execFileSync('sqlite3', ['-json', DB, query]).toString().trim()
const rows = (query) => JSON.parse(sql(query) || '[]')
const quoted = (text) => `'${text.replaceAll("'", "''")}'`

before(async () => {
  browser = await openSession()
})

after(async () => {
  if (storedRubric !== null) sql(`UPDATE studies SET rubric_json = ${quoted(storedRubric)} WHERE study_id = '${STUDY}'`)
  // Back on the study's case list out of reading mode, as turns.test.mjs ends: the next file's
  // app starts where this one left.
  // The session ends even when the way back fails: left open, it would refuse every later
  // file's session ("Maximum number of active sessions").
  try {
    if (browser) await backToCaseList(browser)
  } finally {
    await browser?.deleteSession().catch(() => {})
  }
})

const shot = (name) => screenshots(browser, 'rubric')(name)
const $ = (selector) => browser.$(selector)
const chosen = {}

/** The rubric rows on screen, row id → value ('' unscored, 'n/a' not applicable). */
async function rubricValues() {
  return Object.fromEntries(
    await browser.$$(testid('rubric-row')).map(async (el) => [await el.getAttribute('data-row'), await el.getAttribute('data-value')]),
  )
}

const rowOf = (id) => $(`[data-testid="rubric-row"][data-row="${id}"]`)

test('the lead limits one dimension to lesion identification and allows N/A on another', async () => {
  await becomeNewRater(browser, RATER, 'neuroradiologist', 9)
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  ;[{ rubric_json: storedRubric }] = rows(`SELECT rubric_json FROM studies WHERE study_id = '${STUDY}'`)
  const dimensions = JSON.parse(storedRubric).dimensions.map((d) => d.id)
  chosen.lesionOnly = dimensions[0]
  chosen.mayBeNa = dimensions[1]
  sql(
    `UPDATE studies SET rubric_json = json_set(rubric_json,
       '$.dimensions[0].families', json('["lesion_identification"]'),
       '$.dimensions[1].allow_not_applicable', json('true')) WHERE study_id = '${STUDY}'`,
  )
  const [rater] = rows(`SELECT id FROM raters WHERE name = '${RATER}'`)
  const open = rows(
    `SELECT a.id, t.family FROM assignments a
       JOIN assignment_plans p ON a.plan = p.id JOIN responses r ON a.response = r.id
       JOIN tasks t ON r.task = t.id
      WHERE a.rater = ${rater.id} AND (a.not_before IS NULL OR a.not_before <= date('now'))
      ORDER BY p.id, a.position`,
  )
  chosen.other = open.find((a) => a.family !== 'lesion_identification')?.id
  chosen.lesions = open.find((a) => a.family === 'lesion_identification')?.id
  assert.ok(chosen.other && chosen.lesions, 'the demo queue holds tasks of both kinds open now')
})

test('on a task of another family the lesion-only dimension is absent, and N/A is stored as its own state', async () => {
  await openFromQueue(browser, chosen.other, 'rubric')
  const before = await rubricValues()
  assert.ok(!(chosen.lesionOnly in before), `${chosen.lesionOnly} is shown on a ${'non-lesion'} task`)
  assert.ok(chosen.mayBeNa in before)
  // N/A is offered on the allowed dimension only.
  assert.equal(await browser.$$(testid('not-applicable')).length, 1)
  const row = await rowOf(chosen.mayBeNa)
  await row.$(testid('not-applicable')).click()
  await waitSaved(browser, 'not applicable')
  assert.equal((await rubricValues())[chosen.mayBeNa], 'n/a')
  assert.equal(await row.$(testid('not-applicable')).getAttribute('aria-pressed'), 'true')
  await browser.pause(300)
  await shot('1-not-applicable')

  const [stored] = rows(
    `SELECT g.dimensions_json, g.not_applicable_json FROM ratings g
       JOIN assignments a ON a.response = g.response AND a.rater = g.rater AND a.read_no = g.read_no
      WHERE a.id = ${chosen.other}`,
  )
  assert.deepEqual(JSON.parse(stored.not_applicable_json), [chosen.mayBeNa])
  assert.ok(!(chosen.mayBeNa in JSON.parse(stored.dimensions_json)), 'N/A was stored as a score')
})

test('a lesion-identification task shows its dimension; the N/A is there again on reload', async () => {
  await openFromQueue(browser, chosen.lesions, 'rubric')
  const values = await rubricValues()
  assert.ok(chosen.lesionOnly in values, `${chosen.lesionOnly} is missing on a lesion task`)
  assert.equal(values[chosen.mayBeNa], '', 'another response starts unrated')
  await browser.pause(300)
  await shot('2-lesion-task')

  await openFromQueue(browser, chosen.other, 'rubric')
  const again = await rubricValues()
  assert.equal(again[chosen.mayBeNa], 'n/a')
  assert.ok(!(chosen.lesionOnly in again))
  assert.equal(await (await rowOf(chosen.mayBeNa)).$(testid('not-applicable')).getAttribute('aria-pressed'), 'true')
  await browser.pause(300)
  await shot('3-reloaded')
})
