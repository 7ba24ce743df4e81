// One account with two roles on one team server, in the real window (issue 16): PostgreSQL and
// the server holding the demo study and a second copy of it under another id, one account
// invited through the real invitation flow as a rater in the first and a curator in the second.
// The account logs in in the window, downloads and reads its queue in the first, then downloads
// and curates the second: each study is read in a database of its own (the second import is not
// refused for the role the first gave the name), and the first opens again as it was. Run through
// scripts/e2e.sh.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DB, LOAD_TIMEOUT_MS, openSession, screenshots, testid, currentRater } from './support.mjs'
import { acceptAndLogin, api, demoOnServer, startCluster, startServer } from './team_server.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const TARGET = process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target')
const CLI = join(TARGET, 'debug', 'neurorater')
const ACCOUNT = 'dual-role'
const PASSWORD = 'dual role long password 42'
const LEAD_PASSWORD = 'the lead long password 42'
const SECOND = 'neurorater-demo-second'

let browser
let work
let cluster
let server
let study

const $ = (selector) => browser.$(selector)
const shot = (name) => screenshots(browser, 'team_two_studies')(name)
// The account databases this file's account made (the run's folder holds earlier files' too).
let earlier = []
const teamDbs = () =>
  readdirSync(dirname(DB)).filter((f) => /^team-[0-9a-f]+(-[0-9a-f]+)?\.sqlite$/.test(f) && !earlier.includes(f))

/** The demo study again under the id `id`, copied onto the server; the lead's one-time code. */
function secondStudy(id) {
  const run = (...args) => execFileSync(CLI, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  const bundle = join(work, 'second')
  run('demo', '--out', bundle)
  const file = join(bundle, 'study.json')
  const meta = JSON.parse(readFileSync(file, 'utf8'))
  meta.study.id = id
  meta.study.title = 'The demo study, second copy'
  writeFileSync(file, JSON.stringify(meta))
  run('import', bundle, '--db', join(work, 'second.sqlite'))
  const report = JSON.parse(
    run('server-import', '--database', cluster.url, '--db', join(work, 'second.sqlite'), '--study', id, '--lead', 'lead', '--lead-site', 'Hospital A'),
  )
  return report.lead_invitation.code
}

async function openStudy(id) {
  const row = await $(`[data-testid="team-study"][data-study="${id}"]`)
  await row.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: `study ${id} was never listed` })
  const role = await row.getAttribute('data-role')
  await row.$(testid('team-study-open')).click()
  return role
}

before(async () => {
  assert.ok(process.env.XDG_CONFIG_HOME, 'XDG_CONFIG_HOME must name the run’s config folder (scripts/e2e.sh sets it)')
  assert.ok(existsSync(CLI), `build the CLI beside the app first (scripts/e2e.sh does): no ${CLI}`)
  work = mkdtempSync(join(tmpdir(), 'neurorater-team-two-e2e-'))
  cluster = await startCluster()
  const demo = demoOnServer(CLI, work, cluster.url)
  study = demo.study
  server = await startServer(CLI, cluster.url)
  const leadToken = await acceptAndLogin(server.base, 'lead', demo.leadCode, LEAD_PASSWORD)
  // An existing account accepts with its password and gains the role in the second study.
  await acceptAndLogin(server.base, 'lead', secondStudy(SECOND), LEAD_PASSWORD)
  const asRater = await api(server.base, 'POST', `/api/studies/${study}/invitations`, leadToken, {
    username: ACCOUNT,
    role: 'rater',
    site: 'Hospital D',
    clinical_role: 'resident',
    years_experience: 2,
  })
  await acceptAndLogin(server.base, ACCOUNT, asRater.code, PASSWORD)
  await api(server.base, 'POST', `/api/studies/${study}/top-up`, leadToken, { raters: [ACCOUNT], per_rater: 2 })
  const asCurator = await api(server.base, 'POST', `/api/studies/${SECOND}/invitations`, leadToken, {
    username: ACCOUNT,
    role: 'curator',
    site: 'Hospital D',
  })
  await acceptAndLogin(server.base, ACCOUNT, asCurator.code, PASSWORD)
  earlier = readdirSync(dirname(DB))
  browser = await openSession(['--server', server.base])
})

after(async () => {
  await browser?.deleteSession().catch(() => {})
  server?.stop()
  cluster?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
})

test('the account reads its queue in the first study', async () => {
  const form = await $(testid('team-login'))
  await form.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the window did not open on the team login' })
  await form.$('input[name="username"]').setValue(ACCOUNT)
  await form.$('input[name="password"]').setValue(PASSWORD)
  await $(testid('team-login-submit')).click()
  assert.equal(await openStudy(study), 'rater')
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the queue never opened' })
  assert.equal((await browser.$$(testid('queue-row'))).length, 2)
  assert.equal(await currentRater(browser), ACCOUNT)
  assert.equal(teamDbs().length, 1)
  await shot('1-rater')
})

test('the same account curates the second study, in a database of its own', async () => {
  await $(testid('team-open')).click()
  assert.equal(await openStudy(SECOND), 'curator')
  await $(testid('gt-diagnosis')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the curation screen never opened on the second study' })
  assert.equal(await currentRater(browser), ACCOUNT)
  assert.ok((await browser.$$(testid('curation-case'))).length > 1)
  assert.equal(teamDbs().length, 2, `one database per study: ${teamDbs()}`)
  await shot('2-curator')
})

test('the first study opens again as it was', async () => {
  await $(testid('team-open')).click()
  assert.equal(await openStudy(study), 'rater')
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the queue never opened again' })
  assert.equal((await browser.$$(testid('queue-row'))).length, 2)
  assert.equal(teamDbs().length, 2)
  await shot('3-rater-again')
})
