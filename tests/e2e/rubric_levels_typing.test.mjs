// Issue 41 finding 7 (b, c) in the real window: the rubric editor could not write level
// descriptors, and after clearing the workbench's spec box, typing "xyz" gave "yzx" (the box
// folded when emptied and unfolded at the first key, the caret sent back to the start). Here the
// lead types into the emptied spec box key by key and finds what they typed, in order; and writes
// a level descriptor of a rubric dimension in the editor, saved into the study's rubric and shown
// again when the editor opens next. Run through scripts/e2e.sh.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { DB, FIRST_START_TIMEOUT_MS, LOAD_TIMEOUT_MS, backToCaseList, openSession, screenshots, testid } from './support.mjs'

const STUDY = 'neurorater-demo'
const DESCRIPTOR = 'Wrong in a way that could harm the patient'

let browser
let storedRubric = null
const $ = (selector) => browser.$(selector)
const shot = (name) => screenshots(browser, 'rubric_levels_typing')(name)
const sql = (query) => execFileSync('sqlite3', ['-json', DB, query]).toString().trim()
const rows = (query) => JSON.parse(sql(query) || '[]')
const quoted = (text) => `'${text.replaceAll("'", "''")}'`

before(async () => {
  browser = await openSession()
})

after(async () => {
  // The demo's rubric as it was, for the files after this one.
  if (storedRubric !== null) sql(`UPDATE studies SET rubric_json = ${quoted(storedRubric)} WHERE study_id = '${STUDY}'`)
  try {
    if (browser) await backToCaseList(browser)
  } finally {
    await browser?.deleteSession().catch(() => {})
  }
})

test('the emptied spec box keeps what is typed, in order', async () => {
  const tab = await $(testid('mode-workbench'))
  await tab.waitForExist({ timeout: FIRST_START_TIMEOUT_MS, interval: 500 })
  await tab.click()
  await browser.waitUntil(
    async () => (await $(testid('workbench-view')).isExisting()) || (await $(testid('leave-reading')).isExisting()),
    { timeout: LOAD_TIMEOUT_MS },
  )
  const leave = await $(testid('leave-reading'))
  if (await leave.isExisting()) await leave.click()
  // The demo's grader spec is listed (first start binds it): the form starts folded.
  await browser.waitUntil(async () => (await browser.$$(testid('workbench-version'))).length > 0, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'the demo grader spec is not listed',
  })
  const box = await $(testid('workbench-spec-text'))
  const open = () => browser.execute((el) => el.closest('details').open, box)
  if (!(await open())) await $(testid('workbench-add-spec-form')).click()
  assert.ok(await open(), 'the lead unfolded "Add a spec"')
  await box.click()
  for (const key of ['a', 'b', 'c']) await browser.keys(key)
  for (let i = 0; i < 3; i++) await browser.keys('Backspace')
  assert.equal(await box.getValue(), '')
  for (const key of ['x', 'y', 'z']) await browser.keys(key)
  assert.equal(await box.getValue(), 'xyz', 'typed after clearing, in order')
  assert.ok(await open(), 'the form stays unfolded under the lead’s typing')
  await shot('1-spec-box-xyz')
})

test('the lead writes a level descriptor in the rubric editor; it is saved and shown again', async () => {
  storedRubric = rows(`SELECT rubric_json FROM studies WHERE study_id = '${STUDY}'`)[0].rubric_json
  await backToCaseList(browser)
  await $(testid('open-rubric-editor')).click()
  await $(testid('rubric-version')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  const dimension = await $(`${testid('rubric-dimension')}[data-index="0"]`)
  const lowest = await dimension.$(testid('level-descriptor'))
  await lowest.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the editor has no field for a level descriptor' })
  const value = Number(await lowest.getAttribute('data-value'))
  await lowest.scrollIntoView({ block: 'center' })
  await lowest.setValue(DESCRIPTOR)
  assert.equal(await lowest.getValue(), DESCRIPTOR)
  await $(testid('rubric-save')).click()
  const status = await $(testid('rubric-status'))
  await status.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'saving the rubric never reported' })
  assert.match(await status.getText(), /^Saved/)
  await shot('2-level-descriptor-saved')

  const rubric = JSON.parse(rows(`SELECT rubric_json FROM studies WHERE study_id = '${STUDY}'`)[0].rubric_json)
  assert.deepEqual(rubric.dimensions[0].levels.find((l) => l.value === value), { value, descriptor: DESCRIPTOR })

  await $(testid('rubric-editor-close')).click()
  await $(testid('open-rubric-editor')).click()
  const again = await $(`${testid('rubric-dimension')}[data-index="0"] ${testid('level-descriptor')}[data-value="${value}"]`)
  await again.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  assert.equal(await again.getValue(), DESCRIPTOR)
  await $(testid('rubric-editor-close')).click()
})
