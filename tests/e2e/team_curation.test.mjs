// A curator in the desktop app against the team server, in the real window (issue 16):
// PostgreSQL and the server on the demo study, two curators invited through the real invitation
// flow, a TCP relay the test controls between the app and the server. Curator A logs in in the
// window and downloads the study's cases (the server's curation package), edits a case's
// diagnosis and saves: the server holds the version. Curator B saves from the same version over
// HTTP; A's next save is refused with the stale message naming B, and A's edits stay in the form.
// With the relay cut, a save says the server cannot be reached and keeps the edits too. B submits
// their version, A reviews and finalises it in the window, and the lead's ground-truth endpoint
// returns it. The lead then adds a case and copies the study onto the server again: A opens the
// study again and the copy takes the case in, the window saying so; offline, it opens as it is.
// Run through scripts/e2e.sh.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { LOAD_TIMEOUT_MS, openSession, screenshots, testid, currentRater } from './support.mjs'
import { acceptAndLogin, api, demoOnServer, startCluster, startRelay, startServer } from './team_server.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const TARGET = process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target')
const CLI = join(TARGET, 'debug', 'neurorater')
const CURATOR_A = 'curator-a'
const CURATOR_B = 'curator-b'
const PASSWORD_A = 'curator a long password 42'
const PASSWORD_B = 'curator b long password 42'
const LEAD_PASSWORD = 'the lead long password 42'
const DIAGNOSIS_A = 'Diagnosis as curator A first saw it (e2e)'
const DIAGNOSIS_B = 'Diagnosis as curator B saved it (e2e)'
const DIAGNOSIS_A_AGAIN = 'Curator A’s second edit, not saved yet (e2e)'
const ADDED_CASE = 'added-later-01'

let browser
let work
let cluster
let server
let relay
let study
let leadToken
let tokenB
let caseId

const $ = (selector) => browser.$(selector)
const shot = (name) => screenshots(browser, 'team_curation')(name)
const caseUrl = () => `/api/studies/${study}/cases/${caseId}`

/** The form scrolls; a button below the fold is brought into view before the click. */
async function press(id) {
  const button = await $(testid(id))
  await button.scrollIntoView({ block: 'center' })
  await button.click()
}

/** The latest version of main as the form shows it: "2 draft". */
async function status() {
  const badge = await $(testid('curation-status'))
  return `${await badge.getAttribute('data-version')} ${await badge.getAttribute('data-status')}`
}

async function waitStatus(expected) {
  await browser.waitUntil(async () => (await status().catch(() => '')) === expected, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `the status never became "${expected}" (it is "${await status().catch(() => '?')}")`,
  })
}

/** The error the form shows, once there is one. */
async function shownError() {
  const notice = await $(`${testid('curation-form')} .error-notice`)
  await notice.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'no error was shown' })
  return notice.getText()
}

/** The case's versions on the server, as curator B reads them. */
const serverHistory = () => api(server.base, 'GET', `${caseUrl()}/curation`, tokenB)

/** Opens another case and comes back, so the form reads the case's versions again. */
async function reopenCase() {
  const other = (await browser.$$(testid('curation-case')))[1]
  await other.click()
  await browser.waitUntil(async () => (await $(testid('gt-heading')).getAttribute('data-case').catch(() => '')) !== caseId, { timeout: LOAD_TIMEOUT_MS })
  await $(`${testid('curation-case')}[data-case="${caseId}"]`).click()
  await browser.waitUntil(async () => (await $(testid('gt-heading')).getAttribute('data-case').catch(() => '')) === caseId, { timeout: LOAD_TIMEOUT_MS })
}

before(async () => {
  assert.ok(process.env.XDG_CONFIG_HOME, 'XDG_CONFIG_HOME must name the run’s config folder (scripts/e2e.sh sets it)')
  assert.ok(existsSync(CLI), `build the CLI beside the app first (scripts/e2e.sh does): no ${CLI}`)
  work = mkdtempSync(join(tmpdir(), 'neurorater-team-curation-e2e-'))
  cluster = await startCluster()
  const demo = demoOnServer(CLI, work, cluster.url)
  study = demo.study
  server = await startServer(CLI, cluster.url)
  leadToken = await acceptAndLogin(server.base, 'lead', demo.leadCode, LEAD_PASSWORD)
  for (const [username, password] of [
    [CURATOR_A, PASSWORD_A],
    [CURATOR_B, PASSWORD_B],
  ]) {
    const invitation = await api(server.base, 'POST', `/api/studies/${study}/invitations`, leadToken, { username, role: 'curator', site: 'Hospital A' })
    const token = await acceptAndLogin(server.base, username, invitation.code, password)
    if (username === CURATOR_B) tokenB = token
  }
  relay = await startRelay(server.base.replace('http://', ''))
  browser = await openSession(['--server', relay.base])
})

after(async () => {
  await browser?.deleteSession().catch(() => {})
  await relay?.stop()
  server?.stop()
  cluster?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
})

test("curator A logs in and downloads the study's cases for curation", async () => {
  const form = await $(testid('team-login'))
  await form.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the window did not open on the team login' })
  await form.$('input[name="username"]').setValue(CURATOR_A)
  await form.$('input[name="password"]').setValue(PASSWORD_A)
  await $(testid('team-login-submit')).click()
  const row = await $(`[data-testid="team-study"][data-study="${study}"]`)
  await row.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the study list never appeared after the login' })
  assert.equal(await row.getAttribute('data-role'), 'curator')
  assert.equal(await row.$(testid('team-study-open')).getText(), 'Download the cases and curate')
  await shot('1-studies')
  await row.$(testid('team-study-open')).click()

  await $(testid('gt-diagnosis')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the curation screen never opened on the downloaded copy' })
  assert.match(await $(testid('mode-curation')).getAttribute('class'), /\bactive\b/)
  assert.equal(await currentRater(browser), CURATOR_A)
  const cases = await browser.$$(testid('curation-case'))
  assert.ok(cases.length > 1, 'every case of the study is there')
  caseId = await cases[0].getAttribute('data-case')
  // The server's history: the bundle's ground truth is version 1, final.
  await waitStatus('1 final')
  await browser.waitUntil(
    async () => {
      const states = await browser.$$(testid('viewport')).map((el) => el.getAttribute('data-state'))
      return states.length > 0 && states.every((s) => s === 'ready')
    },
    { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the viewer never showed the downloaded images' },
  )
  // No model answer or grader output came with the copy.
  assert.doesNotMatch(await $('body').getText(), /grader|model-[a-z]|gpt|gemini|claude/i)
  await shot('2-curation-copy')
})

test('A edits the diagnosis and saves: the server holds the version', async () => {
  await $(testid('gt-diagnosis')).setValue(DIAGNOSIS_A)
  await press('gt-save')
  await waitStatus('2 draft')
  const history = await serverHistory()
  const saved = history.find((v) => v.version === 2)
  assert.ok(saved, JSON.stringify(history))
  assert.equal(saved.truth.diagnosis, DIAGNOSIS_A)
  assert.equal(saved.based_on, 1)
  assert.equal(saved.status, 'draft')
  assert.equal(saved.author, CURATOR_A)
  await shot('3-saved-on-server')
})

test("B saves from the same version; A's next save shows the conflict and keeps A's edits", async () => {
  const history = await serverHistory()
  const base = history.find((v) => v.version === 2)
  const answer = await api(server.base, 'POST', `${caseUrl()}/curation/versions`, tokenB, {
    edit_id: randomUUID(),
    branch: 'main',
    based_on: 2,
    truth: { ...base.truth, diagnosis: DIAGNOSIS_B },
  })
  assert.equal(answer.version, 3)

  await $(testid('gt-diagnosis')).setValue(DIAGNOSIS_A_AGAIN)
  await press('gt-save')
  const message = await shownError()
  assert.match(message, new RegExp(`version 3 was saved by ${CURATOR_B} at .*nothing was saved`))
  assert.equal(await $(testid('gt-diagnosis')).getValue(), DIAGNOSIS_A_AGAIN, "A's edit stays in the form")
  assert.equal((await serverHistory()).length, 3, 'nothing was saved on the server')
  await shot('4-conflict-edits-kept')
})

test('without the network a save says so and keeps the edits', async () => {
  relay.block(true)
  try {
    await press('gt-save')
    await browser.waitUntil(async () => /cannot be reached/.test(await shownError().catch(() => '')), {
      timeout: LOAD_TIMEOUT_MS,
      timeoutMsg: 'the save never said the server cannot be reached',
    })
    assert.match(await shownError(), /Nothing was saved; your changes stay in the form/)
    assert.equal(await $(testid('gt-diagnosis')).getValue(), DIAGNOSIS_A_AGAIN)
    await shot('5-offline-edits-kept')
  } finally {
    relay.block(false)
  }
  assert.equal((await serverHistory()).length, 3)
})

test('B submits; A reviews and finalises; the lead reads it as the ground truth', async () => {
  await api(server.base, 'POST', `${caseUrl()}/curation/versions/3/submit`, tokenB, { edit_id: randomUUID() })
  // A leaves their edit aside and reads the server's versions again.
  await press('gt-discard')
  await reopenCase()
  await waitStatus('3 in_review')
  assert.equal(await $(testid('gt-diagnosis')).getValue(), DIAGNOSIS_B)
  await $(testid('gt-review-comment')).setValue('Agreed with B.')
  await shot('6-review-waiting')
  await press('gt-finalise')
  await waitStatus('3 final')
  assert.equal(await $(testid('curation-notice')).getText(), 'Finalised.')
  const rows = await browser.$$(testid('gt-version')).map((row) => row.getText())
  assert.match(rows[0], new RegExp(`v3.*main.*Final.*${CURATOR_B}`))
  await shot('7-finalised')

  const truth = await api(server.base, 'GET', `${caseUrl()}/ground-truth`, leadToken)
  assert.equal(truth.ground_truth.diagnosis, DIAGNOSIS_B)
  // A's finalisation is on the server under A's name, in its audit log.
  const finalised = (await serverHistory()).find((v) => v.version === 3)
  assert.equal(finalised.status, 'final')
  assert.ok(finalised.reviews.some((r) => r.by === CURATOR_A && r.decision === 'finalised'), JSON.stringify(finalised))
})

test('a case the lead adds on the server reaches A’s copy when A opens the study again', async () => {
  // The lead adds a case (a copy of the bundle's first under a new id) to their database and
  // copies the study onto the server again.
  const bundleCases = join(work, 'demo', 'cases')
  cpSync(join(bundleCases, readdirSync(bundleCases).sort()[0]), join(bundleCases, ADDED_CASE), { recursive: true })
  const caseFile = join(bundleCases, ADDED_CASE, 'case.json')
  writeFileSync(caseFile, JSON.stringify({ ...JSON.parse(readFileSync(caseFile, 'utf8')), id: ADDED_CASE }, null, 2))
  const run = (...args) => execFileSync(CLI, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  run('import', join(work, 'demo'), '--db', join(work, 'study.sqlite'))
  const report = JSON.parse(run('server-import', '--database', cluster.url, '--db', join(work, 'study.sqlite'), '--study', study))
  assert.equal(report.cases_added, 1, JSON.stringify(report))
  const held = (await browser.$$(testid('curation-case'))).length

  await $(testid('team-open')).click()
  const row = await $(`[data-testid="team-study"][data-study="${study}"]`)
  await row.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the study list did not come back' })
  await row.$(testid('team-study-open')).click()
  const added = await $(testid('team-added'))
  await added.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the window never said a case was added' })
  assert.match(await added.getText(), /added 1 case to the study since your last download/)
  const newCase = await $(`${testid('curation-case')}[data-case="${ADDED_CASE}"]`)
  await newCase.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the added case is not in the case list' })
  assert.equal((await browser.$$(testid('curation-case'))).length, held + 1)
  assert.equal(await currentRater(browser), CURATOR_A)
  // The case A finalised reads the server's versions as before.
  await $(`${testid('curation-case')}[data-case="${caseId}"]`).click()
  await browser.waitUntil(async () => (await $(testid('gt-heading')).getAttribute('data-case').catch(() => '')) === caseId, { timeout: LOAD_TIMEOUT_MS })
  await waitStatus('3 final')
  // The added case opens with its images and its ground truth, version 1.
  await newCase.click()
  await browser.waitUntil(async () => (await $(testid('gt-heading')).getAttribute('data-case').catch(() => '')) === ADDED_CASE, { timeout: LOAD_TIMEOUT_MS })
  await waitStatus('1 final')
  await browser.waitUntil(
    async () => {
      const states = await browser.$$(testid('viewport')).map((el) => el.getAttribute('data-state'))
      return states.length > 0 && states.every((s) => s === 'ready')
    },
    { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the viewer never showed the added case’s images' },
  )
  await shot('8-case-added')
})

test('offline, A opens the study again: the copy here opens as it is, its versions waiting for the server', async () => {
  const held = (await browser.$$(testid('curation-case'))).length
  relay.block(true)
  try {
    await $(testid('team-open')).click()
    const row = await $(`[data-testid="team-study"][data-study="${study}"]`)
    await row.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the study list did not come back' })
    await row.$(testid('team-study-open')).click()
    await $(testid('team-view')).waitForExist({ reverse: true, timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the copy did not open offline' })
    assert.match(await $(testid('mode-curation')).getAttribute('class'), /\bactive\b/)
    assert.equal((await browser.$$(testid('curation-case'))).length, held)
    // The versions are the server's: the case's form says it cannot read them now.
    await browser.waitUntil(async () => /The team server cannot be reached/.test(await $('body').getText()), {
      timeout: LOAD_TIMEOUT_MS,
      timeoutMsg: 'the curation screen never said the server cannot be reached',
    })
    assert.equal(await $(testid('team-added')).isExisting(), false, 'nothing was added')
    assert.equal(await currentRater(browser), CURATOR_A)
    await shot('9-offline-reopened')
  } finally {
    relay.block(false)
  }
})
