// Issue 41 finding 8a in the real window: after logging out of a team server, the window stayed on
// the rater's database (the account's copy of the server's study) until the app was restarted.
// Here the app starts on this run's own database (the demo study), a rater logs in through "Team
// server…", downloads a study the workstation does not hold and reads it; after "Log out" the
// window is back on the workstation's own study, asks who reads, and lists the workstation's
// readers again, not the account's one. Run through scripts/e2e.sh.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { FIRST_START_TIMEOUT_MS, LOAD_TIMEOUT_MS, invoke, openSession, screenshots, testid, currentRater } from './support.mjs'
import { acceptAndLogin, api, startCluster, startServer } from './team_server.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const TARGET = process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target')
const CLI = join(TARGET, 'debug', 'neurorater')
const RATER = 'rater-out'
const PASSWORD = 'rater out long password 42'
const LEAD_PASSWORD = 'the lead long password 42'
const STUDY = 'neurorater-team-copy'
const TITLE = 'The team server copy'

let browser
let work
let cluster
let server

const $ = (selector) => browser.$(selector)
const shot = (name) => screenshots(browser, 'team_logout')(name)
const titleShown = () => browser.execute(() => document.querySelector('.study-title')?.textContent?.trim() ?? null)

before(async () => {
  assert.ok(process.env.XDG_CONFIG_HOME, 'XDG_CONFIG_HOME must name the run’s config folder (scripts/e2e.sh sets it)')
  assert.ok(existsSync(CLI), `build the CLI beside the app first (scripts/e2e.sh does): no ${CLI}`)
  work = mkdtempSync(join(tmpdir(), 'neurorater-logout-e2e-'))
  cluster = await startCluster()
  // The demo under another id and title: the server's study is not the workstation's.
  const run = (...args) => execFileSync(CLI, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  const bundle = join(work, 'copy')
  run('demo', '--out', bundle)
  const file = join(bundle, 'study.json')
  const meta = JSON.parse(readFileSync(file, 'utf8'))
  meta.study.id = STUDY
  meta.study.title = TITLE
  writeFileSync(file, JSON.stringify(meta))
  run('import', bundle, '--db', join(work, 'copy.sqlite'))
  const report = JSON.parse(
    run('server-import', '--database', cluster.url, '--db', join(work, 'copy.sqlite'), '--study', STUDY, '--lead', 'lead', '--lead-site', 'Hospital A'),
  )
  server = await startServer(CLI, cluster.url)
  const lead = await acceptAndLogin(server.base, 'lead', report.lead_invitation.code, LEAD_PASSWORD)
  const invitation = await api(server.base, 'POST', `/api/studies/${STUDY}/invitations`, lead, {
    username: RATER,
    role: 'rater',
    site: 'Hospital B',
    clinical_role: 'neurologist',
    years_experience: 5,
  })
  await api(server.base, 'POST', '/api/invitations/accept', null, { code: invitation.code, password: PASSWORD })
  await api(server.base, 'POST', `/api/studies/${STUDY}/top-up`, lead, { raters: [RATER], per_rater: 2 })
  browser = await openSession()
})

after(async () => {
  await browser?.deleteSession().catch(() => {})
  server?.stop()
  cluster?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
})

test('logging out of the team server returns the window to the workstation’s own study', async () => {
  const open = await $(testid('team-open'))
  await open.waitForExist({ timeout: FIRST_START_TIMEOUT_MS, interval: 500, timeoutMsg: 'the window never got ready' })
  await browser.waitUntil(async () => (await titleShown()) !== null, { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'no study shown' })
  const home = await titleShown()
  assert.notEqual(home, TITLE)
  const homeRaters = await invoke(browser, 'list_raters', {})
  assert.ok(homeRaters.ok, JSON.stringify(homeRaters.failure))

  await open.click()
  const form = await $(testid('team-login'))
  await form.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await form.$('input[name="server"]').setValue(server.base)
  await form.$('input[name="username"]').setValue(RATER)
  await form.$('input[name="password"]').setValue(PASSWORD)
  await $(testid('team-login-submit')).click()
  const row = await $(`[data-testid="team-study"][data-study="${STUDY}"]`)
  await row.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the study list never appeared after the login' })
  await row.$(testid('team-study-open')).click()
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the downloaded queue never opened' })
  await browser.waitUntil(async () => (await titleShown()) === TITLE, { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the server study is not shown' })
  assert.equal(await currentRater(browser), RATER)
  await shot('1-reading-team-study')

  await $(testid('team-open')).click()
  await $(testid('team-logout')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await $(testid('team-logout')).click()
  await $(testid('team-login')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the login form never came back' })
  await shot('2-logged-out')
  // Back out of the team dialog, as the person would.
  await $(`${testid('team-login')} button[type="button"]`).click()

  await browser.waitUntil(async () => (await titleShown()) === home, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `after logout the window does not show the workstation’s study “${home}”`,
  })
  const raters = await invoke(browser, 'list_raters', {})
  assert.ok(raters.ok, JSON.stringify(raters.failure))
  assert.deepEqual(
    raters.ok.map((r) => r.name).sort(),
    homeRaters.ok.map((r) => r.name).sort(),
    'the workstation’s readers, not the account’s copy’s',
  )
  assert.notEqual(await currentRater(browser), RATER, 'the account’s rater no longer reads here')
  const studies = await invoke(browser, 'list_studies', {})
  assert.ok(!studies.ok.some((s) => s.id === STUDY), 'the server’s study is not in the workstation’s database')
  await $(testid('rater-picker')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'who reads is not asked anew' })
  await shot('3-home-again')
})
