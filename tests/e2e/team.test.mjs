// The desktop app against the team server, in the real window (issue 16): PostgreSQL and the
// server on the demo study, a rater invited through the real invitation flow and topped up, a TCP
// relay the test controls between the app and the server (the app is launched with
// `--server http://127.0.0.1:RELAY`). The rater logs in in the window, downloads their queue,
// reads and saves item 1; the relay is cut; they keep rating items 2 and 3 (the status says the
// changes wait); the relay opens and the status turns to "on the server" without a click; the
// lead's progress over HTTP and the dashboard in the window show the three ratings; PostgreSQL
// holds each edit once. The lead tops the queue up: opening the study again adds the new items
// after the ones read. Run through scripts/e2e.sh.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DB, LOAD_TIMEOUT_MS, openFromQueue, openSession, screenshots, testid, waitSaved, currentRater } from './support.mjs'
import { acceptAndLogin, api, demoOnServer, startCluster, startRelay, startServer } from './team_server.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const TARGET = process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target')
const CLI = join(TARGET, 'debug', 'neurorater')
const RATER = 'rater-b'
const RATER_PASSWORD = 'rater b long password 42'
const LEAD_PASSWORD = 'the lead long password 42'
// Back-off doubles from 1 s to 30 s while the relay is cut; the status must turn by itself.
const SYNC_TIMEOUT_MS = 60_000

let browser
let work
let cluster
let server
let relay
let study
let leadToken
const queue = []

const $ = (selector) => browser.$(selector)
const shot = (name) => screenshots(browser, 'team')(name)
const syncState = async () => {
  const badge = await $(testid('team-sync'))
  return (await badge.isExisting()) ? { state: await badge.getAttribute('data-state'), waiting: Number(await badge.getAttribute('data-waiting')), text: await badge.getText() } : null
}

before(async () => {
  // scripts/e2e.sh gives the run a config folder of its own: the session files land there.
  assert.ok(process.env.XDG_CONFIG_HOME, 'XDG_CONFIG_HOME must name the run’s config folder (scripts/e2e.sh sets it)')
  assert.ok(existsSync(CLI), `build the CLI beside the app first (scripts/e2e.sh does): no ${CLI}`)
  work = mkdtempSync(join(tmpdir(), 'neurorater-team-e2e-'))
  cluster = await startCluster()
  const demo = demoOnServer(CLI, work, cluster.url)
  study = demo.study
  server = await startServer(CLI, cluster.url)
  leadToken = await acceptAndLogin(server.base, 'lead', demo.leadCode, LEAD_PASSWORD)
  // The real invitation flow: the lead invites, the rater accepts with a password of their own.
  const invitation = await api(server.base, 'POST', `/api/studies/${study}/invitations`, leadToken, {
    username: RATER,
    role: 'rater',
    site: 'Hospital B',
    clinical_role: 'neurologist',
    years_experience: 6,
  })
  await api(server.base, 'POST', '/api/invitations/accept', null, { code: invitation.code, password: RATER_PASSWORD })
  const topped = await api(server.base, 'POST', `/api/studies/${study}/top-up`, leadToken, { raters: [RATER], per_rater: 3 })
  assert.equal(topped.raters[0].added, 3)
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

test('the rater logs in in the window and downloads their queue', async () => {
  const form = await $(testid('team-login'))
  await form.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the window did not open on the team login' })
  assert.equal(await form.$('input[name="server"]').getValue(), relay.base, 'the login offers the --server URL')
  await form.$('input[name="username"]').setValue(RATER)
  await form.$('input[name="password"]').setValue('not the password')
  await $(testid('team-login-submit')).click()
  const problem = await $(testid('team-problem'))
  await problem.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  assert.match(await problem.getText(), /username or the password is not right/)
  await form.$('input[name="password"]').setValue(RATER_PASSWORD)
  await shot('1-login')
  await $(testid('team-login-submit')).click()

  const row = await $(`[data-testid="team-study"][data-study="${study}"]`)
  await row.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the study list never appeared after the login' })
  assert.equal(await row.getAttribute('data-role'), 'rater')
  await shot('2-studies')
  await row.$(testid('team-study-open')).click()

  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the downloaded queue never opened' })
  const rows = await browser.$$(testid('queue-row'))
  assert.equal(rows.length, 3, 'the queue is the three items the lead topped up')
  for (const r of rows) queue.push(Number(await r.getAttribute('data-assignment')))
  assert.equal(await currentRater(browser), RATER)
  // Blinded: nothing on the screen names a model or a grader.
  assert.doesNotMatch(await $('body').getText(), /grader|model-[a-z]|gpt|gemini|claude/i)
})

async function comment(position, text) {
  await openFromQueue(browser, queue[position], 'rating-comment')
  await $(testid('rating-comment')).setValue(text)
  await waitSaved(browser, `item ${position + 1}`)
}

/** The rater's ratings on the server: their comments by queue position. */
const serverComments = () =>
  cluster.psql(
    `SELECT s.position, r.state->'scores'->>'comment' FROM ratings r JOIN assignments s ON s.id = r.assignment
     JOIN accounts a ON a.id = s.account WHERE a.username = '${RATER}' ORDER BY s.position`,
  )

test('item 1 is saved and reaches the server', async () => {
  await comment(0, 'Item 1, read with the network.')
  await browser.waitUntil(async () => serverComments() === '1|Item 1, read with the network.', {
    timeout: SYNC_TIMEOUT_MS,
    timeoutMsg: `item 1 never reached the server: ${serverComments()}`,
  })
  await browser.waitUntil(async () => (await syncState())?.state === 'synced' && (await syncState()).waiting === 0, {
    timeout: SYNC_TIMEOUT_MS,
    timeoutMsg: `item 1 never reached the server: ${JSON.stringify(await syncState())}`,
  })
  assert.equal((await syncState()).text, 'All changes are on the server')
  await shot('3-item1-on-server')
})

test('without the network the rater keeps rating and the status says the changes wait', async () => {
  relay.block(true)
  await comment(1, 'Item 2, read offline.')
  await comment(2, 'Item 3, read offline.')
  await browser.waitUntil(async () => (await syncState())?.state === 'offline' && (await syncState()).waiting >= 2, {
    timeout: SYNC_TIMEOUT_MS,
    timeoutMsg: `the status never said the changes wait: ${JSON.stringify(await syncState())}`,
  })
  assert.match((await syncState()).text, /^Saved on this computer · \d+ changes will be sent when the server is reachable$/)
  assert.equal(serverComments(), '1|Item 1, read with the network.', 'nothing of items 2 and 3 reached the server while the relay was cut')
  await shot('4-offline-waiting')
})

test('when the network returns everything is sent without a click, each edit once', async () => {
  relay.block(false)
  await browser.waitUntil(async () => (await syncState())?.state === 'synced' && (await syncState()).waiting === 0, {
    timeout: SYNC_TIMEOUT_MS,
    timeoutMsg: `the status never turned to "on the server": ${JSON.stringify(await syncState())}`,
  })
  assert.equal((await syncState()).text, 'All changes are on the server')
  await shot('5-back-on-server')

  const progress = await api(server.base, 'GET', `/api/studies/${study}/progress`, leadToken)
  const rater = progress.raters.find((r) => r.username === RATER)
  assert.deepEqual([rater.assigned, rater.drafts, rater.submitted], [3, 3, 0], JSON.stringify(rater))
  assert.equal(serverComments(), '1|Item 1, read with the network.\n2|Item 2, read offline.\n3|Item 3, read offline.')
  // Each edit the app made is stored once: as many applied edits as rows the outbox sent, no two
  // with one id, and one audit entry each.
  const [applied, distinct] = cluster.psql('SELECT count(*), count(DISTINCT edit_id) FROM applied_edits').split('|').map(Number)
  assert.equal(applied, distinct)
  const audited = Number(cluster.psql(`SELECT count(*) FROM audit_log WHERE actor = '${RATER}' AND after ? 'edit_id'`))
  assert.equal(audited, applied)
  const teamDb = readdirSync(dirname(DB)).find((f) => /^team-[0-9a-f]+(-[0-9a-f]+)?\.sqlite$/.test(f))
  assert.ok(teamDb, 'the rater reads in a database of their own')
  const sent = execFileSync('python3', ['-c', `import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(*c.execute("SELECT count(*), count(sent_at), count(stopped) FROM team_outbox").fetchone())`, join(dirname(DB), teamDb)], { encoding: 'utf8' })
    .trim()
    .split(' ')
    .map(Number)
  assert.deepEqual(sent, [applied, applied, 0], 'every queued edit sent and acknowledged, none stopped')
})

test('a top-up by the lead reaches the queue while the rater reads, with nobody reopening anything', async () => {
  const topped = await api(server.base, 'POST', `/api/studies/${study}/top-up`, leadToken, { raters: [RATER], per_rater: 2 })
  assert.equal(topped.raters[0].added, 2)
  // The sync worker asks the server what changed every 30 s: the two items are downloaded and
  // added, and the reading screen says so.
  const added = await $(testid('team-notice'))
  await added.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the window never said the queue grew' })
  assert.match(await added.getText(), /added 2 items to your queue, after the ones you have/)
  await shot('5a-topped-up-notice')
  await $(testid('show-queue')).click()
  await browser.waitUntil(async () => (await browser.$$(testid('queue-row'))).length === 5, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'the queue never listed the five items',
  })
  const rows = await browser.$$(testid('queue-row'))
  const assignments = []
  for (const r of rows) assignments.push(Number(await r.getAttribute('data-assignment')))
  assert.equal(assignments.length, 5, 'the three items read before and the two the lead added')
  assert.deepEqual(assignments.slice(0, 3), queue, 'the items read before keep their place')
  // The ratings made before are still here, and nothing was sent twice.
  await openFromQueue(browser, queue[1], 'rating-comment')
  assert.equal(await $(testid('rating-comment')).getValue(), 'Item 2, read offline.')
  await shot('5b-topped-up')
  const [applied, distinct] = cluster.psql('SELECT count(*), count(DISTINCT edit_id) FROM applied_edits').split('|').map(Number)
  assert.equal(applied, distinct)
})

test('a rubric the lead moves on reaches the item open in the window: said, and the dropped dimension gone', async () => {
  const leadDb = join(work, 'study.sqlite')
  // The lead drops the rubric's last dimension in their database, as a new version (the first
  // was copied to the server), and copies the study to the server again.
  const dropped = execFileSync('python3', ['-c', `
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
key, text = c.execute("SELECT id, rubric_json FROM studies WHERE study_id = ?", (sys.argv[2],)).fetchone()
rubric = json.loads(text)
dropped = rubric["dimensions"].pop()["id"]
text = json.dumps(rubric)
c.execute("INSERT INTO rubric_versions (study, version, rubric_json, created_at) VALUES (?, 2, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))", (key, text))
c.execute("UPDATE studies SET rubric_json = ?, rubric_version = 2 WHERE id = ?", (text, key))
c.commit()
print(dropped)`, leadDb, study], { encoding: 'utf8' }).trim()
  const imported = JSON.parse(execFileSync(CLI, ['server-import', '--database', cluster.url, '--db', leadDb, '--study', study], { encoding: 'utf8' }))
  assert.equal(imported.rubric_version, 2, JSON.stringify(imported))
  // Nobody reopens the study: the refresh takes the server's rubric, the open item is saved and
  // read again under it, and the screen says so.
  const notice = await $(testid('team-notice'))
  await browser.waitUntil(async () => /changed the rubric \(version 2 on the team server\)/.test(await notice.getText().catch(() => '')), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'the window never said the rubric changed',
  })
  await $(testid('rubric')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  assert.equal(await $(`[data-testid="rubric-row"][data-row="${dropped}"]`).isExisting(), false, `${dropped} is still offered`)
  assert.equal(await $(testid('rating-comment')).getValue(), 'Item 2, read offline.', 'the draft read again is the one kept')
  const teamDb = readdirSync(dirname(DB)).find((f) => /^team-[0-9a-f]+(-[0-9a-f]+)?\.sqlite$/.test(f))
  const held = execFileSync('python3', ['-c', `import json, sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(json.dumps([d["id"] for d in json.loads(c.execute("SELECT rubric_json FROM studies").fetchone()[0])["dimensions"]]), c.execute("SELECT server_rubric_version FROM team_server_word").fetchone()[0])`, join(dirname(DB), teamDb)], { encoding: 'utf8' }).trim()
  assert.ok(!held.includes(`"${dropped}"`) && held.endsWith(' 2'), held)
  await notice.scrollIntoView({ block: 'center' })
  await shot('5c-rubric-moved-on')
})

test("the lead's dashboard in the window shows the three ratings", async () => {
  await $(testid('team-open')).click()
  await $(testid('team-logout')).click()
  const form = await $(testid('team-login'))
  await form.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'logging out did not bring the login back' })
  await form.$('input[name="username"]').setValue('lead')
  await form.$('input[name="password"]').setValue(LEAD_PASSWORD)
  await $(testid('team-login-submit')).click()
  const row = await $(`[data-testid="team-study"][data-study="${study}"]`)
  await row.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  assert.equal(await row.getAttribute('data-role'), 'lead')
  await row.$(testid('team-study-open')).click()
  const rater = await $(`[data-testid="dashboard-rater"][data-rater="${RATER}"]`)
  await rater.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the dashboard never listed the rater' })
  assert.equal(await rater.getAttribute('data-drafts'), '3')
  assert.equal(await rater.getAttribute('data-submitted'), '0')
  assert.ok(await $(`[data-testid="dashboard-site"][data-site="Hospital B"]`).isExisting())
  // The top bar names the lead's account, not the reader of this computer.
  assert.equal(await $(testid('team-account')).getText(), 'lead · team lead')
  assert.ok(!(await $(testid('current-rater')).isExisting()))
  await shot('6-dashboard')
  // The rater logged out: one session file is left, the lead's, readable by its owner alone and
  // holding no password; the server's log holds no password or token.
  const sessions = join(process.env.XDG_CONFIG_HOME, 'neurorater', 'team-sessions')
  const files = readdirSync(sessions)
  assert.equal(files.length, 1, `only the lead's session is kept: ${files}`)
  assert.equal(statSync(join(sessions, files[0])).mode & 0o777, 0o600)
  const kept = readFileSync(join(sessions, files[0]), 'utf8')
  assert.match(kept, /"username":"lead"/)
  for (const secret of [RATER_PASSWORD, LEAD_PASSWORD]) assert.ok(!kept.includes(secret))
  for (const secret of [RATER_PASSWORD, LEAD_PASSWORD, leadToken]) assert.ok(!server.log().includes(secret))
})
