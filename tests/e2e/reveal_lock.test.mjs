// The reveal lock in the real window (WebKitGTK through tauri-driver): a rater who has submitted
// every response of a case may see its ground truth; from then on the rating of that case is
// locked. The screen says so instead of offering Reopen, still after the response is opened again,
// and the backend refuses a reopen sent through IPC, whatever the page does. Run through
// scripts/e2e.sh (display, driver, NEURORATER_DB).

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { DB, LOAD_TIMEOUT_MS, becomeNewRater, invoke, openSession, screenshots, testid } from './support.mjs'

const RATER = 'Dr Lena Lock'

let browser

before(async () => {
  browser = await openSession()
})

after(async () => {
  await browser?.deleteSession().catch(() => {})
})

const shot = (name) => screenshots(browser, 'reveal-lock')(name)
const $ = (selector) => browser.$(selector)
const rows = (query) => JSON.parse(execFileSync('sqlite3', ['-json', DB, query]).toString().trim() || '[]')

// The case the test reads: the first of the rater's queue whose assignments are all open now (a
// repeat read waits for its wash-out, and the truth stays closed until it is submitted).
const chosen = {}

async function openFromQueue(assignment) {
  await $(testid('show-queue')).click()
  const row = await $(`[data-testid="queue-row"][data-assignment="${assignment}"] button`)
  await row.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await row.click()
  const reading = await $(testid('reading'))
  await browser.waitUntil(async () => (await reading.getAttribute('data-assignment')) === String(assignment), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `assignment ${assignment} never opened`,
  })
}

test('a rater submits every response of one case (through IPC, as the screen would)', async () => {
  await becomeNewRater(browser, RATER, 'neuroradiologist', 9)
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  const [rater] = rows(`SELECT id FROM raters WHERE name = '${RATER}'`)
  chosen.rater = rater.id
  const [first] = rows(
    `SELECT t.case_ref AS case_ref FROM assignments a JOIN assignment_plans p ON a.plan = p.id
       JOIN responses r ON a.response = r.id JOIN tasks t ON r.task = t.id
      WHERE a.rater = ${rater.id}
        AND NOT EXISTS (SELECT 1 FROM assignments b JOIN responses rb ON b.response = rb.id
                          JOIN tasks tb ON rb.task = tb.id
                         WHERE b.rater = a.rater AND tb.case_ref = t.case_ref
                           AND b.not_before > date('now'))
      ORDER BY p.id, a.position LIMIT 1`,
  )
  assert.ok(first, 'the demo queue has a case whose responses are all open now')
  const onCase = rows(
    `SELECT a.id FROM assignments a JOIN responses r ON a.response = r.id JOIN tasks t ON r.task = t.id
      WHERE a.rater = ${rater.id} AND t.case_ref = ${first.case_ref} ORDER BY a.position`,
  ).map((a) => a.id)
  chosen.assignments = onCase
  for (const assignment of onCase) {
    const item = await invoke(browser, 'reading_item', { assignment })
    assert.ok(item.ok, JSON.stringify(item.failure))
    const rubric = item.ok.rubric
    const edit = {
      overall: rubric.overall.max,
      dimensions: Object.fromEntries(rubric.dimensions.map((d) => [d.id, d.min])),
      correctness: 'partly',
      confidence: 3,
      comment: 'read in the reveal-lock test',
      seconds_on_task: 42,
    }
    const saved = await invoke(browser, 'save_rating', { madeAs: rater.id, assignment, edit })
    assert.ok(saved.ok, JSON.stringify(saved.failure))
    const submitted = await invoke(browser, 'submit_rating', { madeAs: rater.id, assignment })
    assert.ok(submitted.ok, JSON.stringify(submitted.failure))
  }
  // Back at the queue (read again as it is shown), the rater's own pace says how long the rest
  // takes: 42 s on each submitted response, so about a minute a response.
  assert.ok(onCase.length >= 3, `a pace needs three submitted responses; the case had ${onCase.length}`)
  await $(testid('show-queue')).click()
  const [{ n: left }] = rows(
    `SELECT count(*) AS n FROM assignments a LEFT JOIN ratings g ON g.response = a.response AND g.rater = a.rater
        AND g.read_no = a.read_no WHERE a.rater = ${rater.id} AND g.status IS NOT 'submitted'`,
  )
  const minutes = Math.round((42 * left) / 60)
  const said = await $(testid('queue-time-left'))
  await said.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the queue never said how long the rest takes' })
  const expected = minutes < 90 ? `About ${minutes} minutes` : `About ${Math.floor(minutes / 60)} h ${minutes % 60} min`
  assert.equal(await said.getText(), `${expected} left at your pace (about 1 minute a response).`)
  await shot('0-time-left')
})

test('the submitted response offers Reopen and warns that seeing the truth locks it', async () => {
  const [assignment] = chosen.assignments
  await openFromQueue(assignment)
  const reopen = await $(testid('reopen'))
  await reopen.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  assert.equal(await $(testid('rating-locked')).isExisting(), false)
  assert.match(await $('.reveal-hint').getText(), /locks your ratings of this case/)
  await reopen.scrollIntoView()
  await browser.pause(500) // let the viewer draw for the screenshot
  await shot('1-submitted')
})

test('revealing the ground truth locks the rating: no Reopen, the lock said, the backend refusing', async () => {
  const [assignment] = chosen.assignments
  await $(testid('reveal-truth')).click()
  await $(testid('revealed-truth')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  const locked = await $(testid('rating-locked'))
  await locked.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  assert.match(await locked.getText(), /locked: you saw the ground truth/)
  assert.equal(await $(testid('reopen')).isExisting(), false, 'Reopen is still offered after the reveal')
  await locked.scrollIntoView()
  await shot('2-revealed-locked')

  // The page's restraint is not the lock: the backend refuses the reopen itself.
  const refusal = await invoke(browser, 'reopen_rating', { madeAs: chosen.rater, assignment })
  assert.equal(refusal.ok, undefined, 'the reopen went through')
  assert.equal(refusal.failure.code, 'refused', JSON.stringify(refusal.failure))
  assert.match(refusal.failure.message, /this rating is locked: you saw the case's ground truth at/)
  // The screen's lock is the backend's decision, by the rule that refused: the same kind and time.
  const item = await invoke(browser, 'reading_item', { assignment })
  assert.equal(item.ok?.reopen_refused?.kind, 'ground_truth_seen', JSON.stringify(item))
  assert.equal(await locked.getAttribute('data-lock'), 'ground_truth_seen')
  assert.ok(refusal.failure.message.includes(item.ok.reopen_refused.at), refusal.failure.message)
  const [stored] = rows(
    `SELECT g.status FROM ratings g JOIN assignments a ON a.response = g.response AND a.rater = g.rater
        AND a.read_no = g.read_no WHERE a.id = ${assignment}`,
  )
  assert.equal(stored.status, 'submitted')
  const reveals = rows(
    `SELECT at FROM audit_log WHERE action = 'ground_truth.revealed' AND actor = '${RATER}'`,
  )
  assert.equal(reveals.length, 1)
  chosen.revealedAt = reveals[0].at
})

test('opened again later, every response of the case shows the lock with when the truth was seen', async () => {
  for (const assignment of chosen.assignments) {
    await openFromQueue(assignment)
    const locked = await $(testid('rating-locked'))
    await locked.waitForExist({ timeout: LOAD_TIMEOUT_MS })
    assert.ok((await locked.getText()).includes(chosen.revealedAt), await locked.getText())
    assert.equal(await $(testid('reopen')).isExisting(), false)
  }
  await $(testid('rating-locked')).scrollIntoView()
  await browser.pause(500)
  await shot('3-reopened-later')
})
