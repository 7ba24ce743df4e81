// The study lead's Plans screen in the real window (WebKitGTK through tauri-driver): with nobody
// reading, the lead creates a capped plan for one reader (recorded as the study lead's, never a
// rater's), tops it up with a second reader, and the
// second reader's queue then holds exactly the items the top-up dealt them. The first reader's
// queue is unchanged by the top-up (checked in the database file). Run through scripts/e2e.sh.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { DB, FIRST_START_TIMEOUT_MS, LOAD_TIMEOUT_MS, invoke, openSession, screenshots, testid, currentRater } from './support.mjs'

const FIRST = 'Dr Pia Planned'
const JOINER = 'Dr Quinn Joiner'
const PLAN = 'e2e plan'
const PER_RATER = 5

let browser

before(async () => {
  browser = await openSession()
})

after(async () => {
  // Back on the study's case list out of reading mode: the next file's app starts where this one
  // left (viewer.test.mjs waits for the case table).
  if (browser) {
    await $(testid('mode-cases')).click()
    const leave = await $(testid('leave-reading'))
    if (await leave.isExisting()) await leave.click()
    await browser.waitUntil(async () => (await browser.$$('.case-row').length) > 0, {
      timeout: LOAD_TIMEOUT_MS,
      timeoutMsg: 'the case list never came back after reading',
    })
  }
  await browser?.deleteSession().catch(() => {})
})

const shot = (name) => screenshots(browser, 'plans')(name)
const $ = (selector) => browser.$(selector)
const rows = (query) => JSON.parse(execFileSync('sqlite3', ['-json', DB, query]).toString().trim() || '[]')

/** The plan's rows of one rater, in queue order. */
const queueOf = (name) =>
  rows(
    `SELECT a.id, a.response, a.position FROM assignments a JOIN assignment_plans p ON a.plan = p.id
       JOIN raters r ON a.rater = r.id WHERE p.name = '${PLAN}' AND r.name = '${name}'
      ORDER BY a.position`,
  )

/** The numbers in the plan's table row of `name`: first reads, overlap, repeats. */
async function countsOf(name) {
  const row = await $(`[data-testid="plan-rater"][data-rater="${name}"]`)
  await row.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: `${name} never listed in the plan` })
  return (await row.$$('td').map((td) => td.getText())).slice(1).map(Number)
}

test('with nobody reading, the lead creates a plan on the Plans screen', async () => {
  await $(testid('mode-plans')).waitForExist({ timeout: FIRST_START_TIMEOUT_MS, interval: 500 })
  // Readers are added as the picker would; neither opens Reading (which deals a demo queue).
  for (const name of [FIRST, JOINER]) {
    const made = await invoke(browser, 'create_rater', { name, role: 'neuroradiologist', yearsExperience: 9 })
    assert.ok(made.ok, JSON.stringify(made))
  }
  await $(testid('mode-plans')).click()
  const leave = await $(testid('leave-reading'))
  if (await leave.isExisting()) await leave.click()
  await $(testid('plans-view')).waitForExist({ timeout: LOAD_TIMEOUT_MS })

  await $(testid('plan-name')).setValue(PLAN)
  await $(testid('plan-seed')).setValue('3')
  await $(testid('plan-overlap')).setValue('0')
  await $('input[placeholder="all"]').setValue(String(PER_RATER))
  await $(`[data-testid="plan-rater-choice"][data-rater="${FIRST}"]`).click()
  await $(`[data-testid="plan-stratify"][data-key="task_family"]`).click()
  await $(testid('plan-create')).click()
  await $(testid('plans-done')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the plan was never created' })
  assert.deepEqual(await countsOf(FIRST), [PER_RATER, 0, 0])
  assert.deepEqual(
    queueOf(FIRST).map((a) => a.position),
    [1, 2, 3, 4, 5],
  )
  // The lead's plan is the study lead's, in the plan and in the audit: not the first rater the
  // database lists (issue 41: a blinded clinician was named its author).
  assert.equal(await $(testid('plan-recorded-as')).getText(), 'Recorded as made by the study lead.')
  const [made] = rows(`SELECT id, created_by FROM assignment_plans WHERE name = '${PLAN}'`)
  assert.equal(made.created_by, null)
  const [audited] = rows(`SELECT actor FROM audit_log WHERE action = 'create assignment plan' AND entity = 'assignment_plan:${made.id}'`)
  assert.equal(audited.actor, 'study lead')
  await shot('1-created')

  // A name taken in the study is refused, and the screen says why.
  await $(testid('plan-name')).setValue(PLAN)
  await $(`[data-testid="plan-rater-choice"][data-rater="${FIRST}"]`).click()
  await $(testid('plan-create')).click()
  const refusal = await $('.plans .error-notice')
  await refusal.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'a duplicate name was not refused on screen' })
  assert.match(await refusal.getText(), /already has a plan named/)
  await shot('2-refused')
})

test('the lead tops the plan up with a new reader; nobody else’s queue changes', async () => {
  const before = queueOf(FIRST)
  const plan = await $(`[data-testid="plan"][data-plan-name="${PLAN}"]`)
  await plan.$(`[data-testid="top-up-rater"][data-rater="${JOINER}"]`).click()
  await plan.$(testid('top-up')).click()
  await browser.waitUntil(async () => /topped up/.test(await $(testid('plans-done')).getText().catch(() => '')), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'the top-up never finished',
  })
  assert.deepEqual(await countsOf(JOINER), [PER_RATER, 0, 0])
  assert.deepEqual(queueOf(FIRST), before, 'the first reader’s queue is untouched')
  const joined = queueOf(JOINER)
  assert.equal(joined.length, PER_RATER)
  const theirs = new Set(before.map((a) => a.response))
  assert.ok(joined.every((a) => !theirs.has(a.response)), 'the joiner is dealt other responses')
  assert.match(await plan.getText(), /topped up once/)
  const [topUp] = rows(`SELECT actor FROM audit_log WHERE action = 'top up assignment plan' ORDER BY id DESC LIMIT 1`)
  assert.equal(topUp.actor, 'study lead')
  await shot('3-topped-up')
})

test('the new reader’s queue holds what the top-up dealt them', async () => {
  await $(testid('mode-reading')).click()
  const choice = await $(`button.rater-choice*=${JOINER}`)
  await choice.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: `${JOINER} is not on the picker` })
  await choice.click()
  await browser.waitUntil(async () => (await currentRater(browser)) === JOINER, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `${JOINER} never became the current rater`,
  })
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await browser.waitUntil(async () => (await browser.$$(testid('queue-row')).length) === PER_RATER, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `the queue never showed the ${PER_RATER} items dealt (the demo queue must not be added)`,
  })
  const listed = await browser.$$(testid('queue-row')).map((row) => row.getAttribute('data-assignment'))
  assert.deepEqual(listed.map(Number), queueOf(JOINER).map((a) => a.id))
  await shot('4-joiner-queue')
})
