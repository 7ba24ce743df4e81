// Human-baseline reader mode in the real window (WebKitGTK through tauri-driver): a resident opens
// Answer before any reading queue exists, answers a task blind (the images, key images and the
// question the model was given; no ground truth, no model answers) with a diagnosis, a ranked
// differential and reasoning. The database then holds it as a response of kind "human" with the
// resident's role and experience kept apart; a neurologist who starts reading afterwards has it
// in the queue like a model's answer, its reading payload saying nothing of a human. The task list
// names each case by the reader's pseudonymous code, never by its id. A reader is refused the
// comparison of curations through IPC. Run through scripts/e2e.sh (display, driver, NEURORATER_DB).

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { DB, FIRST_START_TIMEOUT_MS, LOAD_TIMEOUT_MS, becomeNewRater, invoke, openSession, screenshots, testid, switchReader } from './support.mjs'

const STUDY = 'neurorater-demo'
const DIAGNOSIS = 'Acute ischaemic stroke (e2e baseline answer)'
const DIFFERENTIAL = ['Hemiplegic migraine', 'Todd paresis']
const REASONING = 'Restricted diffusion in a vascular territory.'

let browser

before(async () => {
  browser = await openSession()
})

after(async () => {
  await browser?.deleteSession().catch(() => {})
})

const shot = (name) => screenshots(browser, 'baseline')(name)
const $ = (selector) => browser.$(selector)
const sql = (query) => execFileSync('sqlite3', ['-json', DB, query]).toString().trim()
const rows = (query) => JSON.parse(sql(query) || '[]')

// A blinded reader's case code, computed here from the study's secret as cases::app::catalog
// makes it, so the test can find the case behind what the page shows.
const codeOf = (caseId) => {
  const [{ salt }] = rows(
    `SELECT hex(s.salt) AS salt FROM study_secrets s JOIN studies st ON st.id = s.study WHERE st.study_id = '${STUDY}'`,
  )
  const digest = createHash('sha256').update(Buffer.from(salt, 'hex')).update(caseId).digest('hex')
  return `case-${digest.slice(0, 10)}`
}
const caseIds = () => rows('SELECT case_id FROM cases').map((c) => c.case_id)
const caseIdOf = (code) => {
  const found = caseIds().find((id) => codeOf(id) === code)
  assert.ok(found, `${code} is no case's code`)
  return found
}

test('a resident answers a task blind in Answer mode', async () => {
  const answerMode = await $(testid('mode-baseline'))
  await answerMode.waitForExist({ timeout: FIRST_START_TIMEOUT_MS, interval: 500 })
  await answerMode.click()
  await becomeNewRater(browser, 'Dr Rhea Resident', 'resident', 4)
  assert.match(await $(testid('mode-baseline')).getAttribute('class'), /\bactive\b/, 'still in Answer after choosing')

  await browser.waitUntil(async () => (await browser.$$(testid('baseline-task')).length) > 0, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `no tasks to answer; the page says: ${await $('main').getText()}`,
  })
  const tasks = await browser.$$(testid('baseline-task'))
  const states = []
  for (const t of tasks) states.push(await t.getAttribute('data-state'))
  assert.ok(states.every((s) => s === 'open'), `a fresh resident may answer every task: ${states}`)
  const expected = rows('SELECT count(*) AS n FROM tasks')[0].n
  assert.equal(tasks.length, expected)
  // Each case by its code: a case id (the demo's name the diagnosis) is nowhere in the list.
  const listed = await $(testid('baseline-view')).getText()
  for (const id of caseIds()) assert.ok(!listed.includes(id), `the task list names case ${id}`)
  const [, code, taskId] = /^(\S+) · (\S+)/.exec(await tasks[0].getText())
  assert.match(code, /^case-[0-9a-f]{10}$/)
  const caseId = caseIdOf(code)
  await tasks[0].click()

  const prompt = await $(testid('baseline-prompt'))
  await prompt.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  const stored = rows(
    `SELECT t.prompt FROM tasks t JOIN cases c ON t.case_ref = c.id WHERE c.case_id = '${caseId}' AND t.task_id = '${taskId}'`,
  )[0]
  assert.equal(await prompt.getText(), stored.prompt.trim())
  await browser.waitUntil(
    async () => {
      const viewports = await browser.$$(testid('viewport')).map((el) => el.getAttribute('data-state'))
      return viewports.length > 0 && viewports.every((s) => s === 'ready')
    },
    { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the viewer never became ready' },
  )
  // Blind: neither the ground truth's diagnosis nor any model answer is on the page.
  const page = await $('main').getText()
  const truth = rows(
    `SELECT json_extract(g.body_json, '$.diagnosis') AS diagnosis FROM ground_truth g JOIN cases c ON g.case_ref = c.id WHERE c.case_id = '${caseId}'`,
  )
  assert.equal(truth.length, 1, 'the demo case has a ground truth to be blind to')
  for (const { diagnosis } of truth) assert.ok(!page.includes(diagnosis), `the ground truth "${diagnosis}" is shown`)
  const answers = rows(
    `SELECT r.answer FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id WHERE c.case_id = '${caseId}'`,
  )
  assert.ok(answers.length > 0)
  for (const { answer } of answers.filter((a) => a.answer.trim().length >= 10)) {
    assert.ok(!page.includes(answer.slice(0, 60)), `a model answer is shown: ${answer.slice(0, 60)}`)
  }

  assert.equal(await $(testid('baseline-role')).getValue(), 'resident')
  assert.equal(await $(testid('baseline-years')).getValue(), '4')
  await $(testid('baseline-diagnosis')).setValue(DIAGNOSIS)
  // One diagnosis per line; the driver drops a "\n" inside a value, so Enter is a key press.
  const differential = await $(testid('baseline-differential'))
  await differential.setValue(DIFFERENTIAL[0])
  await browser.keys('Enter')
  await differential.addValue(DIFFERENTIAL[1])
  await $(testid('baseline-reasoning')).setValue(REASONING)
  await shot('1-blind-task')
  await $(testid('baseline-submit')).click()
  const notice = await $(testid('baseline-notice'))
  await notice.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  assert.match(await notice.getText(), /without your name/)
  await browser.waitUntil(
    async () => (await browser.$$(testid('baseline-task')))[0].getAttribute('data-state').then((s) => s === 'answered'),
    { timeout: 10_000, timeoutMsg: 'the answered task is still offered' },
  )
  await shot('2-answered')

  // The database: a response of kind human, labelled by role; who answered is kept apart.
  const [response] = rows(
    `SELECT r.model, r.sample, r.respondent_kind, r.answer, r.rationale, h.role, h.years_experience,
            h.differential_json, h.seconds_on_task, ra.name, c.case_id, t.task_id
     FROM responses r JOIN human_answers h ON h.response = r.id JOIN raters ra ON ra.id = h.rater
     JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id`,
  )
  assert.deepEqual(
    { ...response, seconds_on_task: undefined },
    {
      model: 'human:resident',
      sample: 0,
      respondent_kind: 'human',
      answer: `${DIAGNOSIS}\nDifferential: 1. ${DIFFERENTIAL[0]}; 2. ${DIFFERENTIAL[1]}`,
      rationale: REASONING,
      role: 'resident',
      years_experience: 4,
      differential_json: JSON.stringify(DIFFERENTIAL),
      seconds_on_task: undefined,
      name: 'Dr Rhea Resident',
      case_id: caseId,
      task_id: taskId,
    },
  )
  assert.ok(response.seconds_on_task > 0)
  const audit = rows("SELECT actor, entity FROM audit_log WHERE action = 'baseline.answered'")
  assert.deepEqual(audit, [{ actor: 'Dr Rhea Resident', entity: `task:${STUDY}/${caseId}/${taskId}` }])

  // A clinician reading blinded is refused the comparison of curations, whatever the page asks.
  const refused = await invoke(browser, 'curation_compare', { studyId: STUDY, caseId, a: 1, b: 1 })
  assert.equal(refused.failure?.code, 'refused', JSON.stringify(refused))
  assert.match(refused.failure.message, /reads blinded/)
})

test('a neurologist reading afterwards gets the human answer in the queue like a model’s, blind to its author', async () => {
  await switchReader(browser)
  await becomeNewRater(browser, 'Dr Nico Neurologist', 'neurologist')
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  const me = rows("SELECT id FROM raters WHERE name = 'Dr Nico Neurologist'")[0].id
  const [human] = rows("SELECT id FROM responses WHERE respondent_kind = 'human'")
  const [assignment] = rows(`SELECT id FROM assignments WHERE rater = ${me} AND response = ${human.id}`)
  assert.ok(assignment, 'the demo queue holds the human answer')

  const item = await invoke(browser, 'reading_item', { assignment: assignment.id })
  assert.ok(item.ok, JSON.stringify(item))
  assert.ok(item.ok.response.answer.startsWith(DIAGNOSIS))
  const payload = JSON.stringify(item.ok)
  for (const leak of ['human', 'resident', 'Rhea', 'respondent']) {
    assert.ok(!payload.toLowerCase().includes(leak.toLowerCase()), `the reading item gives away "${leak}"`)
  }

  // The window shows the neurologist's queue, the human answer among the model answers.
  await shot('3-queue-with-the-human-answer')
})

test('answer mode after opening Reading: only the case whose model answer was opened is closed, and the refusal says so', async () => {
  const me = rows("SELECT id FROM raters WHERE name = 'Dr Nico Neurologist'")[0].id
  const states = async () => {
    await browser.waitUntil(async () => (await browser.$$(testid('baseline-task')).length) > 0, {
      timeout: LOAD_TIMEOUT_MS,
      timeoutMsg: `no tasks listed; the page says: ${await $('main').getText()}`,
    })
    const byTask = {}
    for (const t of await browser.$$(testid('baseline-task'))) {
      const [, caseId, taskId] = /^(\S+) · (\S+)/.exec(await t.getText())
      byTask[`${caseId}/${taskId}`] = await t.getAttribute('data-state')
    }
    return byTask
  }
  // Reading dealt Nico the whole demo queue, none of it opened: every task is still blind.
  await $(testid('mode-baseline')).click()
  const dealt = await states()
  assert.ok(Object.values(dealt).every((s) => s === 'open'), `a dealt, unopened queue closed tasks: ${JSON.stringify(dealt)}`)
  await shot('4-answer-after-reading-dealt')

  // Opening one model answer in Reading closes that case's tasks, and only those.
  const shownItems = (kind) =>
    rows(
      `SELECT DISTINCT c.case_id FROM audit_log l JOIN assignments a ON l.entity = 'assignment:' || a.id
       JOIN responses r ON a.response = r.id JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
       WHERE l.action = 'show item' AND a.rater = ${me} AND r.respondent_kind = '${kind}'`,
    )
  const shown = () => shownItems('model')
  assert.equal(shownItems('human').length, 1, 'the human answer fetched above counts as shown, but closes nothing')
  await $(testid('mode-reading')).click()
  await $(testid('continue')).click()
  await $(testid('progress')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  // The first response may be the human answer, already shown: then the next one is a model's.
  for (let step = 0; step < 2 && shown().length === 0; step++) {
    await browser.pause(1_000)
    if (shown().length === 0) await $('button[aria-label="Next response (j)"]').click()
  }
  await browser.waitUntil(async () => shown().length === 1, { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'no model answer was recorded as shown' })
  const [{ case_id: openedCase }] = shown()
  await $(testid('mode-baseline')).click()
  const after = await states()
  for (const [task, state] of Object.entries(after)) {
    assert.equal(state, task.startsWith(`${codeOf(openedCase)}/`) ? 'not_blind' : 'open', `${task}: ${JSON.stringify(after)}`)
  }
  await shot('5-answer-after-opening-one')
  const closed = Object.keys(after).find((task) => after[task] === 'not_blind')
  // Asked for by the code the page showed, as the page asks.
  const [caseId, taskId] = closed.split('/')
  const refused = await invoke(browser, 'baseline_blind_task', { studyId: STUDY, caseId, taskId })
  assert.equal(refused.failure?.code, 'refused', JSON.stringify(refused))
  assert.match(refused.failure.message, /has been shown a model's answer on this case \(opened in Reading or rated, first at 20/)
})
