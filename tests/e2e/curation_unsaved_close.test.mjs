// Issue 41 finding 2 in the real window: closing the window dropped the curator's unsaved edits
// (a case switch kept them; a real close did not), and they were gone after restart. Here a
// curator types a diagnosis without saving it, the app is closed (its session ended, the process
// gone), the app starts again on the same database, and the curator finds the typed diagnosis in
// the form, told that the unsaved changes are back, and the case marked as holding them. Run
// through scripts/e2e.sh.

import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { DB, FIRST_START_TIMEOUT_MS, LOAD_TIMEOUT_MS, becomeNewRater, currentRater, openSession, screenshots, switchReader, testid } from './support.mjs'

const CURATOR = 'Dr Una Unsaved'
const TYPED = 'Typed before the window closed, never saved'

let browser
const $ = (selector) => browser.$(selector)
const shot = (name) => screenshots(browser, 'curation_unsaved_close')(name)
const rows = (query) => JSON.parse(execFileSync('sqlite3', ['-json', DB, query]).toString().trim() || '[]')

after(async () => {
  await browser?.deleteSession().catch(() => {})
})

async function diagnosisShown() {
  return browser.execute(() => document.querySelector('[data-testid="gt-diagnosis"]')?.value ?? null)
}

test('unsaved curation edits survive closing the window and come back at the next start', async () => {
  browser = await openSession()
  await browser.waitUntil(
    async () => (await $(testid('new-rater')).isExisting()) || (await $(testid('switch-reader')).isExisting()),
    { timeout: FIRST_START_TIMEOUT_MS, interval: 500, timeoutMsg: 'the window never got ready' },
  )
  if (!(await $(testid('new-rater')).isExisting())) await switchReader(browser)
  await becomeNewRater(browser, CURATOR, 'curator')
  const diagnosis = await $(testid('gt-diagnosis'))
  await diagnosis.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'a new curator did not land on Curation' })
  await browser.waitUntil(async () => (await diagnosisShown()) !== '', { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the form never filled' })
  const caseShown = await $('.case-list button.active').getAttribute('data-case')
  await diagnosis.setValue(TYPED)
  await $(testid('gt-unsaved')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the form does not say it holds unsaved changes' })
  // What a close would find: a moment for the last keystroke's write, as for any edit.
  await browser.pause(1500)
  await shot('1-typed-not-saved')
  const versionsBefore = rows(`SELECT count(*) AS n FROM ground_truth_versions`)[0]?.n

  // The window closes: the app process ends with it.
  await browser.deleteSession()
  browser = null

  browser = await openSession()
  await $(testid('rater-picker')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the picker never asked who reads' })
  const choice = await $(`button.rater-choice*=${CURATOR}`)
  await choice.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: `${CURATOR} is not on the picker` })
  await choice.click()
  await browser.waitUntil(async () => (await currentRater(browser)) === CURATOR, { timeout: LOAD_TIMEOUT_MS })
  await $(testid('gt-diagnosis')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await browser.waitUntil(async () => (await diagnosisShown()) === TYPED, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'the diagnosis typed before the window closed is not in the form after restart',
  })
  assert.match(await $(testid('curation-notice')).getText(), /unsaved changes are back/)
  assert.ok(await $(testid('gt-unsaved')).isExisting(), 'the form says the changes are unsaved')
  assert.equal(await $('.case-list button.active').getAttribute('data-case'), caseShown)
  assert.ok(await $('.case-list button.active .unsaved-dot').isExisting(), 'the case is marked as holding unsaved changes')
  // Kept, not saved: no version was made behind the curator's back.
  assert.equal(rows(`SELECT count(*) AS n FROM ground_truth_versions`)[0]?.n, versionsBefore)
  await shot('2-back-after-restart')
})
