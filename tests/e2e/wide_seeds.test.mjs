// Issue 41 finding 5 in the real window: the workbench showed a split seed other than the one
// stored (a 64-bit integer through a JavaScript number), an older grader version could be
// confirmed on the test items after a newer one (the best test score picked after the fact), and a
// new version's card showed the previous version's run progress. Here: every seed the window shows
// is the stored one, digit for digit (a split seed drawn from 64 bits, a spec's seed and a plan's
// seed of 2^63 − 1 typed by the lead); a confirmed version closes the test items to the earlier
// one, on screen and through IPC; progress stays with its run. Run through scripts/e2e.sh.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { execFileSync } from 'node:child_process'
import { DB, FIRST_START_TIMEOUT_MS, LOAD_TIMEOUT_MS, addSpec, invoke, openSession, screenshots, testid } from './support.mjs'

const V1 = 'wide-grader-v1'
const V2 = 'wide-grader-v2'
const MAX_I64 = '9223372036854775807'
const RUN_TIMEOUT_MS = 300_000
const PLAN = 'wide seed plan'

let browser
let server
let endpoint
const shot = (name) => screenshots(browser, 'wide_seeds')(name)
const $ = (selector) => browser.$(selector)
const rows = (query) => JSON.parse(execFileSync('sqlite3', ['-json', DB, query]).toString().trim() || '[]')

before(async () => {
  // An OpenAI-compatible grader: a score from the prompt's length, so the two versions differ.
  server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      const prompt = JSON.parse(body).messages[0].content
      const score = 1 + (prompt.length % 5)
      response.writeHead(200, { 'Content-Type': 'application/json' })
      response.end(
        JSON.stringify({
          choices: [{ message: { role: 'assistant', content: JSON.stringify({ score, errors: [], rationale: 'e2e' }) } }],
          usage: { prompt_tokens: 10, completion_tokens: 5 },
        }),
      )
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  endpoint = `http://127.0.0.1:${server.address().port}/v1`
  browser = await openSession()
})

after(async () => {
  await browser?.deleteSession()
  server?.close()
})

async function openWorkbench() {
  const tab = await $(testid('mode-workbench'))
  await tab.waitForExist({ timeout: FIRST_START_TIMEOUT_MS, timeoutMsg: 'the Workbench tab never appeared' })
  await tab.click()
  await browser.waitUntil(
    async () => (await $(testid('workbench-view')).isExisting()) || (await $(testid('leave-reading')).isExisting()),
    { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'neither the workbench nor the reading gate appeared' },
  )
  const leave = await $(testid('leave-reading'))
  if (await leave.isExisting()) await leave.click()
  await $(testid('workbench-view')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
}

async function choose(name) {
  const button = await $(`${testid('workbench-version')}[data-name="${name}"]`)
  await button.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: `${name} is not listed` })
  await button.click()
  await browser.waitUntil(async () => (await $('.workbench .main h3').getText()) === name, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `${name}'s card never showed`,
  })
}

async function runShown(name) {
  await $(testid('workbench-run')).click()
  const outcome = await $(testid('workbench-outcome'))
  await outcome.waitForExist({ timeout: RUN_TIMEOUT_MS, timeoutMsg: `the run of ${name} never finished` })
  assert.match(await outcome.getText(), /Done: (\d+) of \1 stored/)
}

test('the split seed and a spec seed of 2^63 − 1 are shown as stored', async () => {
  await openWorkbench()
  await browser.waitUntil(
    async () => (await browser.$$(testid('workbench-version'))).length > 0 || (await $('p*=No grader spec yet').isExisting()),
    { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the list of grader specs never loaded' },
  )
  const spec = [
    `name = "${V1}"`,
    `endpoint = "${endpoint}"`,
    'model = "e2e-judge"',
    'temperature = 0.0',
    `seed = ${MAX_I64}`,
    'max_tokens = 200',
    'concurrency = 8',
    'prompt = """Grade {{answer}} on {{rubric}} with {{taxonomy}}"""',
  ].join('\n')
  await addSpec(browser, await $(testid('workbench-spec-text')), spec, 'workbench-add-spec')
  await choose(V1)
  assert.match(await $('.workbench .main .meta').getText(), new RegExp(`seed ${MAX_I64} ·`))

  const agreement = await $(testid('workbench-agreement'))
  await agreement.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  const [{ seed: stored }] = rows(`SELECT CAST(seed AS TEXT) AS seed FROM grader_splits`)
  // Stored as SQLite's signed 64 bits; the split's seed is the same 64 bits unsigned.
  const unsigned = (BigInt(stored) + (1n << 64n)) % (1n << 64n)
  const shown = (await agreement.getText()).match(/split by seed (\d+)/)?.[1]
  assert.equal(shown, unsigned.toString(), 'the seed shown is the stored one, every digit')
  await shot('1-seeds')
})

test('a new version’s card shows no progress of the previous version’s run', async () => {
  await runShown(V1)
  assert.ok(await $(testid('workbench-progress')).isExisting(), 'the run shows its progress')
  await $(testid('workbench-prompt')).setValue('Grade this answer: {{answer}} against {{rubric}} and {{taxonomy}}, strictly.')
  await $(testid('workbench-new-name')).setValue(V2)
  await $(testid('workbench-save-version')).click()
  await browser.waitUntil(async () => (await $('.workbench .main h3').getText()) === V2, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'the new version never opened',
  })
  await browser.pause(500)
  assert.equal(await $(testid('workbench-progress')).isExisting(), false, `${V2} has not run: no progress is its`)
  assert.equal(await $(testid('workbench-outcome')).isExisting(), false, `${V2} has not run: no outcome is its`)
  await shot('2-new-version-no-progress')
})

test('once the newer version is confirmed, the older one cannot be', async () => {
  await runShown(V2)
  await $(testid('workbench-confirm')).click()
  await $(testid('workbench-confirm-yes')).click()
  await $(testid('workbench-test-agreement')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: `${V2} was never confirmed` })

  await choose(V1)
  const closed = await $(testid('workbench-test-closed'))
  await closed.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: `${V1}'s card does not say the test items are closed to it` })
  assert.match(await closed.getText(), new RegExp(`${V2}, a later version, was confirmed`))
  assert.equal(await $(testid('workbench-confirm')).isExisting(), false, 'no confirm button on a closed version')
  assert.equal(await $(testid('workbench-test-agreement')).isExisting(), false)
  await shot('3-older-closed')

  // Nor through IPC, as a page of an older build would ask.
  const asked = await invoke(browser, 'workbench_confirm', { studyId: 'neurorater-demo', grader: V1 })
  assert.ok(asked.failure, `confirming ${V1} after ${V2} was accepted: ${JSON.stringify(asked.ok)}`)
  assert.match(asked.failure.message, /a later version, was confirmed/)
  const confirmed = rows(`SELECT grader FROM grader_confirmations ORDER BY id`).map((r) => r.grader)
  assert.deepEqual(confirmed, [V2])
})

test('a plan seed of 2^63 − 1 typed by the lead is stored and shown exactly', async () => {
  const made = await invoke(browser, 'create_rater', { name: 'Dr Wide Seed', role: 'neuroradiologist', yearsExperience: 4 })
  assert.ok(made.ok, JSON.stringify(made))
  await $(testid('mode-plans')).click()
  await $(testid('plans-view')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await $(testid('plan-name')).setValue(PLAN)
  await $(testid('plan-seed')).setValue(MAX_I64)
  await $('[data-testid="plan-rater-choice"][data-rater="Dr Wide Seed"]').waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await $('[data-testid="plan-rater-choice"][data-rater="Dr Wide Seed"]').click()
  await $(testid('plan-create')).click()
  const plan = await $(`[data-testid="plan"][data-plan-name="${PLAN}"]`)
  await plan.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the plan was never created' })
  assert.match(await plan.getText(), new RegExp(`Seed ${MAX_I64} ·`))
  const [{ seed }] = rows(`SELECT CAST(seed AS TEXT) AS seed FROM assignment_plans WHERE name = '${PLAN}'`)
  assert.equal(seed, MAX_I64)
  await shot('4-plan-seed')
  await $(testid('mode-cases')).click()
})
