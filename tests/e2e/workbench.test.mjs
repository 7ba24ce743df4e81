// The grader workbench in the real window, on the demo study (whose clinicians' ratings first
// start imports): the study lead adds a grader spec pointing at an OpenAI-compatible server this
// test starts, runs it with live progress, sees the development agreement (checked here against
// Pearson's r computed from the items the window opens), opens the largest disagreement with its
// key images in the viewer, confirms the version and sees the test agreement.
// Run through scripts/e2e.sh, which provides the display, the driver and NEURORATER_DB.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { FIRST_START_TIMEOUT_MS, LOAD_TIMEOUT_MS, addSpec, invoke, openSession, screenshots, testid } from './support.mjs'

const GRADER = 'e2e-grader-v1'
const RUN_TIMEOUT_MS = 240_000

let browser
let server
let endpoint
let requests = 0
const shot = (name) => screenshots(browser, 'workbench')(name)

/** A score on the demo's 1–5 scale from the answer's text, so that scores vary between items. */
function scoreOf(prompt) {
  let sum = 0
  for (const c of prompt) sum = (sum + c.codePointAt(0)) % 9973
  return 1 + (sum % 5)
}

before(async () => {
  server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      requests += 1
      const prompt = JSON.parse(body).messages[0].content
      const score = scoreOf(prompt)
      const reply = { score, errors: score <= 2 ? [{ category: 'P3', quote: 'lesion' }] : [], rationale: `scored ${score} by the e2e grader` }
      response.writeHead(200, { 'Content-Type': 'application/json' })
      response.end(
        JSON.stringify({
          choices: [{ message: { role: 'assistant', content: JSON.stringify(reply) } }],
          usage: { prompt_tokens: 100, completion_tokens: 20 },
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

function pearson(x, y) {
  const n = x.length
  const mx = x.reduce((a, b) => a + b, 0) / n
  const my = y.reduce((a, b) => a + b, 0) / n
  let sxy = 0
  let sxx = 0
  let syy = 0
  for (let i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my)
    sxx += (x[i] - mx) ** 2
    syy += (y[i] - my) ** 2
  }
  return sxy / Math.sqrt(sxx * syy)
}

test('the lead runs a grader version, sees development agreement, opens a disagreement, confirms and sees test agreement', async () => {
  const tab = await browser.$(testid('mode-workbench'))
  await tab.waitForExist({ timeout: FIRST_START_TIMEOUT_MS, timeoutMsg: 'the Workbench tab never appeared' })
  await tab.click()
  // A clinician an earlier test file left as the current reader keeps the workbench closed.
  await browser.waitUntil(
    async () => (await browser.$(testid('workbench-view')).isExisting()) || (await browser.$(testid('leave-reading')).isExisting()),
    { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'neither the workbench nor the reading gate appeared' },
  )
  const leave = await browser.$(testid('leave-reading'))
  if (await leave.isExisting()) await leave.click()
  await browser.$(testid('workbench-view')).waitForExist({ timeout: LOAD_TIMEOUT_MS })

  const spec = [
    `name = "${GRADER}"`,
    `endpoint = "${endpoint}"`,
    'model = "e2e-judge"',
    'temperature = 0.0',
    'seed = 11',
    'max_tokens = 200',
    'concurrency = 4',
    'price_per_input_token = 0.000001',
    'price_per_output_token = 0.000002',
    'prompt = """Grade {{answer}} on {{rubric}} with {{taxonomy}}"""',
  ].join('\n')
  const text = await browser.$(testid('workbench-spec-text'))
  await text.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  // The form is folded when the study already has a spec (runs.test.mjs ran first on this
  // database): wait for the list, so that addSpec meets the form as the lead would.
  await browser.waitUntil(
    async () =>
      (await browser.$$(testid('workbench-version'))).length > 0 || (await browser.$('p*=No grader spec yet').isExisting()),
    { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the list of grader specs never loaded' },
  )
  await addSpec(browser, text, spec, 'workbench-add-spec')
  await browser.waitUntil(async () => (await browser.$(`${testid('workbench-version')}[data-name="${GRADER}"]`).isExisting()), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'the added spec is not listed',
  })
  const hidden = await browser.$(testid('workbench-agreement')).getText()
  assert.match(hidden, /hidden until you confirm/)

  await browser.$(testid('workbench-run')).click()
  await browser.$(testid('workbench-progress')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  const outcome = await browser.$(testid('workbench-outcome'))
  await outcome.waitForExist({ timeout: RUN_TIMEOUT_MS, timeoutMsg: 'the run never finished' })
  const done = await outcome.getText()
  const [, stored, total] = done.match(/Done: (\d+) of (\d+) stored/) ?? []
  assert.ok(Number(total) > 0 && stored === total, done)
  assert.equal(requests, Number(total), 'one request per response')
  const progressText = await browser.$(testid('workbench-progress')).getText()
  assert.match(progressText, new RegExp(`${total} / ${total} stored · ${Number(total) * 120} tokens · cost`))
  await shot('run')

  // Development agreement against r computed here from the development items the browser lists.
  await browser.waitUntil(async () => (await browser.$$(testid('workbench-disagreement'))).length > 0, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'no disagreement listed after the run',
  })
  const listed = await invoke(browser, 'workbench_disagreements', { studyId: 'neurorater-demo', grader: GRADER })
  assert.ok(listed.ok, JSON.stringify(listed.failure))
  const grader = []
  const clinicians = []
  for (const d of listed.ok) {
    const item = await invoke(browser, 'workbench_item', { grader: GRADER, response: d.response })
    assert.ok(item.ok, JSON.stringify(item.failure))
    const scores = item.ok.clinicians.map((c) => c.overall)
    grader.push(item.ok.grader_score)
    clinicians.push(scores.reduce((a, b) => a + b, 0) / scores.length)
  }
  const devText = await browser.$(testid('workbench-dev-agreement')).getText()
  assert.match(devText, new RegExp(`${listed.ok.length} of \\d+ graded`))
  const expectedR = pearson(grader, clinicians).toFixed(2)
  assert.ok(devText.includes(`r = ${expectedR}`), `${devText} (expected r = ${expectedR})`)

  // The largest disagreement, its key images in the viewer, the judges side by side.
  await browser.$$(testid('workbench-disagreement'))[0].click()
  const item = await browser.$(testid('workbench-item'))
  await item.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  assert.equal(await item.getAttribute('data-item'), listed.ok[0].item)
  await browser.$(`${testid('workbench-item')} canvas`).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the viewer never opened' })
  await browser.pause(1500)
  assert.match(await browser.$(testid('workbench-grader')).getText(), /scored \d by the e2e grader/)
  assert.match(await browser.$(testid('workbench-clinicians')).getText(), /mean \d\.\d\d/)
  await shot('disagreement')

  await browser.$(testid('workbench-confirm')).click()
  await browser.$(testid('workbench-confirm-yes')).click()
  const testAgreement = await browser.$(testid('workbench-test-agreement'))
  await testAgreement.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the test agreement never appeared' })
  assert.match(await testAgreement.getText(), /confirmed by study lead .*: (r = -?\d\.\d\d|no r)/)
  await shot('confirmed')
})
