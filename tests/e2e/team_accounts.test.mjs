// Issue 36 in the real window: a team study's people looked after with no terminal and no curl.
// The lead sets their password with the code `server-import` printed, opens the dashboard,
// invites a rater (the code shown once in the window), invites a curator and revokes that
// invitation; the rater sets their password with the code, changes it and sees their sessions;
// the lead tops the rater up, locks them out of reveal and resets their password; the rater sets
// a new one with the reset code. Everything is checked against the server's own answers. One
// app instance plays both people, one after the other. Last, the lead takes the rater's rating
// into this window's database from the dashboard, the rater added with the role the invitation
// gave them. Run through scripts/e2e.sh.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { FIRST_START_TIMEOUT_MS, LOAD_TIMEOUT_MS, invoke, openSession, screenshots, testid } from './support.mjs'
import { api, demoOnServer, startCluster, startServer } from './team_server.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const TARGET = process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target')
const CLI = join(TARGET, 'debug', 'neurorater')
const LEAD_PASSWORD = 'the lead long password 42'
const RATER = 'rater-new'
const RATER_FIRST = 'the new rater first password'
const RATER_SECOND = 'the new rater second password'
const RATER_THIRD = 'the new rater third password'

let browser
let work
let cluster
let server
let study
let leadCode

const $ = (selector) => browser.$(selector)
const shot = (name) => screenshots(browser, 'team_accounts')(name)

before(async () => {
  assert.ok(existsSync(CLI), `build the CLI beside the app first (scripts/e2e.sh does): no ${CLI}`)
  work = mkdtempSync(join(tmpdir(), 'neurorater-accounts-e2e-'))
  cluster = await startCluster()
  ;({ study, leadCode } = demoOnServer(CLI, work, cluster.url))
  server = await startServer(CLI, cluster.url)
  browser = await openSession()
})

after(async () => {
  await browser?.deleteSession().catch(() => {})
  server?.stop()
  cluster?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
})

/** The team page, from wherever the window is. */
async function teamPage() {
  const open = await $(testid('team-open'))
  await open.waitForClickable({ timeout: FIRST_START_TIMEOUT_MS, interval: 500, timeoutMsg: 'no Team server button' })
  await open.click()
  await $(testid('team-view')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
}

/** "I have a code": sets `username`'s password with `code` and logs in. */
async function acceptCode(username, code, password, kind) {
  await $(testid('team-have-code')).click()
  const form = await $(testid('team-code-form'))
  await form.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  if (kind === 'reset') await $(testid('team-code-reset')).click()
  await form.$('input[name="server"]').setValue(server.base)
  await form.$('input[name="username"]').setValue(username)
  await form.$('input[name="code"]').setValue(code)
  await form.$('input[name="new-password"]').setValue(password)
  await form.$('input[name="repeat-password"]').setValue(password)
  await $(testid('team-code-submit')).click()
  const who = `${testid('team-view')} ${testid('team-account')}`
  await browser.waitUntil(async () => (await $(who).isExisting()) && (await $(who).getText()).includes(username), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `${username} was not logged in after setting the password: ${await $(testid('team-code-problem')).getText().catch(() => '')}`,
  })
}

async function logout() {
  await $(testid('team-logout')).click()
  await $(testid('team-login')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the login form never came back' })
}

async function login(username, password) {
  const form = await $(testid('team-login'))
  await form.$('input[name="server"]').setValue(server.base)
  await form.$('input[name="username"]').setValue(username)
  await form.$('input[name="password"]').setValue(password)
  await $(testid('team-login-submit')).click()
  await $(`[data-testid="team-study"][data-study="${study}"]`).waitForExist({ timeout: LOAD_TIMEOUT_MS })
}

async function openDashboard() {
  await $(`[data-testid="team-study"][data-study="${study}"] ${testid('team-study-open')}`).click()
  await $(testid('team-members')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the dashboard never showed the people' })
}

/** The code the window shows once, for `username`. */
async function shownCode(username) {
  const box = await $(`[data-testid="team-code"][data-username="${username}"]`)
  await box.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: `no code shown for ${username}` })
  const code = (await box.$(testid('team-code-value')).getText()).trim()
  assert.match(code, /^[A-Za-z0-9_-]{43}$/, 'a 256-bit code')
  return code
}

const invitationState = (username) =>
  browser.execute((u) => document.querySelector(`[data-testid="team-invitation"][data-username="${u}"]`)?.getAttribute('data-state') ?? null, username)

test('the lead sets a password with the import’s code and invites a rater from the dashboard', async () => {
  await teamPage()
  await acceptCode('lead', leadCode, LEAD_PASSWORD, 'invitation')
  await shot('1-lead-in')
  await openDashboard()
  const form = await $(testid('team-invite-form'))
  await form.$('input[name="invite-username"]').setValue(RATER)
  await form.$('input[name="invite-site"]').setValue('Hospital B')
  await form.$('input[name="invite-years"]').setValue('7')
  await $(testid('team-invite-submit')).click()
  const code = await shownCode(RATER)
  await browser.waitUntil(async () => (await invitationState(RATER)) === 'open', { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the invitation is not listed as open' })
  await shot('2-invited')

  // A curator invited by mistake: revoked, listed so, and the server says the same.
  await form.$('input[name="invite-username"]').setValue('curator-oops')
  await form.$('select[name="invite-role"]').selectByAttribute('value', 'curator')
  await $(testid('team-invite-submit')).click()
  const oopsCode = await shownCode('curator-oops')
  await $(`[data-testid="team-invitation"][data-username="curator-oops"] ${testid('team-invitation-revoke')}`).click()
  await browser.waitUntil(async () => (await invitationState('curator-oops')) === 'revoked', { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the revoked invitation is not listed so' })
  const refused = await fetch(`${server.base}/api/invitations/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code: oopsCode, password: 'the curator long password' }),
  })
  assert.equal(refused.status, 404, 'a revoked code admits nobody')

  // The rater, on this computer after the lead: sets a password with the code, changes it.
  await teamPage()
  await logout()
  await acceptCode(RATER, code, RATER_FIRST, 'invitation')
  const row = await $(`[data-testid="team-study"][data-study="${study}"]`)
  assert.equal(await row.getAttribute('data-role'), 'rater')
  await $(`${testid('team-account-panel')} summary`).click()
  await $(testid('team-session')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'no session listed' })
  const sessions = await $$(testid('team-session'))
  assert.equal(sessions.length, 1)
  assert.equal(await sessions[0].getAttribute('data-current'), 'true')
  const panel = await $(testid('team-password-form'))
  const inputs = await panel.$$('input')
  await inputs[0].setValue(RATER_FIRST)
  await inputs[1].setValue(RATER_SECOND)
  await inputs[2].setValue(RATER_SECOND)
  await $(testid('team-password-submit')).click()
  await $(testid('team-password-done')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the password change was not confirmed' })
  await shot('3-rater-account')
  const old = await fetch(`${server.base}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: RATER, password: RATER_FIRST }),
  })
  assert.equal(old.status, 401, 'the first password no longer logs in')
  await logout()
})

test('the lead tops up, locks and resets the rater’s password; the rater sets a new one', async () => {
  await login('lead', LEAD_PASSWORD)
  await openDashboard()
  const rater = `[data-testid="dashboard-rater"][data-rater="${RATER}"]`
  await $(rater).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the new rater is not on the dashboard' })
  const topUpInput = await $(`${rater} .top-up input`)
  await topUpInput.setValue('3')
  await $(`${rater} ${testid('dashboard-top-up')}`).click()
  await $(testid('dashboard-acted')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await $(`${rater} ${testid('dashboard-lock')}`).click()
  await browser.waitUntil(async () => (await $(`${rater} ${testid('dashboard-lock')}`).getAttribute('data-locked')) === 'true', {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'the lock is not shown',
  })
  await $(`[data-testid="team-invitation"][data-username="${RATER}"] ${testid('team-reset-password')}`).click()
  const resetCode = await shownCode(RATER)
  await shot('4-lead-acted')

  // The server agrees: three assigned, locked.
  const leadToken = (await api(server.base, 'POST', '/api/login', null, { username: 'lead', password: LEAD_PASSWORD })).token
  const progress = await api(server.base, 'GET', `/api/studies/${study}/progress`, leadToken)
  const seen = progress.raters.find((r) => r.username === RATER)
  assert.deepEqual([seen.assigned, seen.reveal_locked], [3, true], JSON.stringify(seen))

  await teamPage()
  await logout()
  await acceptCode(RATER, resetCode, RATER_THIRD, 'reset')
  await shot('5-rater-after-reset')
  const second = await fetch(`${server.base}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: RATER, password: RATER_SECOND }),
  })
  assert.equal(second.status, 401, 'the password before the reset no longer logs in')
  for (const secret of [leadCode, resetCode, LEAD_PASSWORD, RATER_FIRST, RATER_SECOND, RATER_THIRD]) {
    assert.ok(!server.log().includes(secret), 'a secret in the server log')
  }
})

test('the lead takes the server’s ratings into this database from the dashboard, the new rater with their role', async () => {
  // The rater reads one response on the server and submits it.
  const token = (await api(server.base, 'POST', '/api/login', null, { username: RATER, password: RATER_THIRD })).token
  const [entry] = await api(server.base, 'GET', `/api/studies/${study}/queue`, token)
  const item = await api(server.base, 'GET', `/api/studies/${study}/items/${entry.assignment}`, token)
  const dimensions = Object.fromEntries(item.rubric.dimensions.map((d) => [d.id, d.max]))
  const edits = `/api/studies/${study}/items/${entry.assignment}/edits`
  const saved = await api(server.base, 'POST', edits, token, {
    edit_id: 'e2e-pull-save',
    base_version: 0,
    edit: {
      kind: 'save',
      rating: {
        scores: { overall: item.rubric.overall.max, correctness: 'correct', confidence: 4, comment: '', seconds_on_task: 30, dimensions },
        labels: [],
      },
    },
  })
  await api(server.base, 'POST', edits, token, { edit_id: 'e2e-pull-submit', base_version: saved.version, edit: { kind: 'submit' } })

  // Set-up: nobody reads at this workstation (an earlier file chose a reader), as for a lead.
  const left = await invoke(browser, 'leave_reading', {})
  assert.equal(left.failure, undefined, JSON.stringify(left.failure))
  const before = await invoke(browser, 'list_raters', {})
  assert.ok(!before.ok.some((r) => r.name === RATER), 'the window’s database does not know the rater yet')

  await teamPage()
  await logout()
  await login('lead', LEAD_PASSWORD)
  await openDashboard()
  await $(testid('dashboard-pull')).click()
  const pulled = await $(testid('dashboard-pulled'))
  await pulled.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: `nothing was taken in: ${await $(testid('dashboard-problem')).getText().catch(() => '')}` })
  const text = await pulled.getText()
  assert.match(text, /^1 rating added, 0 updated, 0 already here; raters added with the role you gave them on the server: rater-new/, text)
  await shot('6-pulled')

  // The database has the rater as the invitation described them (a neuroradiologist, 7 years),
  // and their rating; a second pull adds nothing.
  const after = await invoke(browser, 'list_raters', {})
  const added = after.ok.find((r) => r.name === RATER)
  assert.deepEqual([added?.role, added?.years_experience], ['neuroradiologist', 7], JSON.stringify(added))
  await $(testid('dashboard-pull')).click()
  await browser.waitUntil(async () => (await $(testid('dashboard-pulled')).getText()).startsWith('0 ratings added, 0 updated, 1 already here.'), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'a second pull did not say it found the rating already here',
  })
})

const $$ = (selector) => browser.$$(selector)
