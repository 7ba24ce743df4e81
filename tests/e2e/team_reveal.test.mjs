// A rater's reveal of the ground truth in the desktop app against the team server, in the real
// window (issue 16): PostgreSQL and the server on the demo study, a rater invited through the
// real invitation flow, a TCP relay the test controls between the app and the server. The
// rater's account database holds no ground truth (the server-built package carries none), so the
// reveal is the server's: with the relay cut, "Show the ground truth" says the submit has not
// reached the server and nothing is lost; with it open, the window shows the server's ground
// truth (the lead's, over HTTP) and the rating is locked here as on the server. Once the lead
// locks the rater, their submitted rating of another case offers no Reopen (the lead's lock is
// shown) and its reveal says the lead closed the ground truth. Then a
// conflict: the same rater saves an item over HTTP ("another computer"), the window's next save
// of it is refused and the item stopped; "Keep the server's version" brings the server's rating
// into the window, and, after a second conflict, "Send mine over it" puts the window's on the
// server. Run through scripts/e2e.sh.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DB, LOAD_TIMEOUT_MS, assertTopBarFits, currentRater, invoke, openFromQueue, openSession, screenshots, testid, waitSaved } from './support.mjs'
import { acceptAndLogin, api, demoOnServer, startCluster, startRelay, startServer } from './team_server.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const TARGET = process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target')
const CLI = join(TARGET, 'debug', 'neurorater')
// A long username: the one-row top bar keeps the reader control and every button in it.
const RATER = 'annaliese-vandenberghe-okonkwo'
const RATER_PASSWORD = 'rater r long password 42'
const LEAD_PASSWORD = 'the lead long password 42'
const SYNC_TIMEOUT_MS = 60_000

let browser
let work
let cluster
let server
let relay
let study
let leadToken
let raterToken
let raterId
/** The rater's local assignments grouped by case, in queue order: [{caseId, assignments}]. */
let cases = []

const $ = (selector) => browser.$(selector)
const shot = (name) => screenshots(browser, 'team_reveal')(name)

const teamDbNames = () =>
  existsSync(dirname(DB)) ? readdirSync(dirname(DB)).filter((f) => /^team-[0-9a-f]+(-[0-9a-f]+)?\.sqlite$/.test(f)) : []
/** Account databases earlier window test files left beside the app's (their servers are gone). */
const earlierTeamDbs = new Set(teamDbNames())

/** The account database the rater reads the study in, beside the app's: the one this file's
 * download made. */
function teamDb() {
  const name = teamDbNames().find((f) => !earlierTeamDbs.has(f))
  assert.ok(name, 'the rater reads in a database of their own')
  return join(dirname(DB), name)
}
const rows = (query) => JSON.parse(execFileSync('sqlite3', ['-json', teamDb(), query]).toString().trim() || '[]')

const syncState = async () => {
  const badge = await $(testid('team-sync'))
  return (await badge.isExisting()) ? { state: await badge.getAttribute('data-state'), waiting: Number(await badge.getAttribute('data-waiting')) } : null
}

async function waitSynced(what) {
  await browser.waitUntil(async () => (await syncState())?.state === 'synced' && (await syncState()).waiting === 0, {
    timeout: SYNC_TIMEOUT_MS,
    timeoutMsg: `${what}: the status never said everything is on the server: ${JSON.stringify(await syncState())}`,
  })
}

/** Rates and submits every response of `entry`'s case through IPC, as the screen would. */
async function submitCase(entry) {
  for (const assignment of entry.assignments) {
    const item = await invoke(browser, 'reading_item', { assignment })
    assert.ok(item.ok, JSON.stringify(item.failure))
    const rubric = item.ok.rubric
    const edit = {
      overall: rubric.overall.max,
      dimensions: Object.fromEntries(rubric.dimensions.map((d) => [d.id, d.min])),
      correctness: 'partly',
      confidence: 3,
      comment: 'read in the team reveal test',
      seconds_on_task: 42,
    }
    const saved = await invoke(browser, 'save_rating', { madeAs: raterId, assignment, edit })
    assert.ok(saved.ok, JSON.stringify(saved.failure))
    const submitted = await invoke(browser, 'submit_rating', { madeAs: raterId, assignment })
    assert.ok(submitted.ok, JSON.stringify(submitted.failure))
  }
}

async function showTruth() {
  const button = await $(testid('reveal-truth'))
  await button.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await button.scrollIntoView({ block: 'center' })
  await button.click()
}

async function revealProblem() {
  const problem = await $(testid('reveal-problem'))
  await problem.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the reveal showed no problem' })
  return problem.getText()
}

before(async () => {
  assert.ok(process.env.XDG_CONFIG_HOME, 'XDG_CONFIG_HOME must name the run’s config folder (scripts/e2e.sh sets it)')
  assert.ok(existsSync(CLI), `build the CLI beside the app first (scripts/e2e.sh does): no ${CLI}`)
  work = mkdtempSync(join(tmpdir(), 'neurorater-team-reveal-e2e-'))
  cluster = await startCluster()
  const demo = demoOnServer(CLI, work, cluster.url)
  study = demo.study
  server = await startServer(CLI, cluster.url)
  leadToken = await acceptAndLogin(server.base, 'lead', demo.leadCode, LEAD_PASSWORD)
  const invitation = await api(server.base, 'POST', `/api/studies/${study}/invitations`, leadToken, {
    username: RATER,
    role: 'rater',
    site: 'Hospital R',
    clinical_role: 'neuroradiologist',
    years_experience: 8,
  })
  raterToken = await acceptAndLogin(server.base, RATER, invitation.code, RATER_PASSWORD)
  await api(server.base, 'POST', `/api/studies/${study}/top-up`, leadToken, { raters: [RATER], per_rater: 6 })
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

test('the rater logs in and downloads their queue, which holds no ground truth', async () => {
  const form = await $(testid('team-login'))
  await form.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the window did not open on the team login' })
  await form.$('input[name="username"]').setValue(RATER)
  await form.$('input[name="password"]').setValue(RATER_PASSWORD)
  await $(testid('team-login-submit')).click()
  const row = await $(`[data-testid="team-study"][data-study="${study}"]`)
  await row.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the study list never appeared after the login' })
  await row.$(testid('team-study-open')).click()
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the downloaded queue never opened' })
  assert.equal(await currentRater(browser), RATER)
  await assertTopBarFits(browser)

  raterId = rows(`SELECT id FROM raters WHERE name = '${RATER}'`)[0].id
  assert.equal(rows('SELECT count(*) AS n FROM ground_truth')[0].n, 0, 'the rater package carries no ground truth')
  const byCase = new Map()
  for (const r of rows(
    `SELECT a.id, c.case_id FROM assignments a JOIN responses r ON a.response = r.id JOIN tasks t ON r.task = t.id
       JOIN cases c ON t.case_ref = c.id WHERE a.rater = ${raterId} ORDER BY a.position`,
  )) {
    if (!byCase.has(r.case_id)) byCase.set(r.case_id, [])
    byCase.get(r.case_id).push(r.id)
  }
  cases = [...byCase].map(([caseId, assignments]) => ({ caseId, assignments }))
  assert.ok(cases.length >= 2, `the queue spans two cases at least: ${JSON.stringify(cases)}`)
})

test('offline, the reveal says the submit has not reached the server and nothing is lost', async () => {
  relay.block(true)
  const [first] = cases
  await submitCase(first)
  await openFromQueue(browser, first.assignments[0], 'reveal-truth')
  await showTruth()
  const problem = await revealProblem()
  assert.match(problem, /has not reached it yet/, problem)
  assert.match(problem, /Nothing is lost/, problem)
  assert.equal(await $(testid('revealed-truth')).isExisting(), false)
  await $(testid('reveal-problem')).scrollIntoView({ block: 'center' })
  await shot('1-offline')
})

test('online, the window shows the server’s ground truth and the rating is locked here as there', async () => {
  relay.block(false)
  await waitSynced('the submits')
  const [first] = cases
  await showTruth()
  const shown = await $(testid('revealed-truth'))
  await shown.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: `no ground truth shown: ${await $(testid('reveal-problem')).getText().catch(() => '')}` })
  // The rater's database knows the case by its code only; the server's item of the same
  // assignment, as the rater may now read it, carries the ground truth the lead keeps there.
  const [link] = rows(`SELECT server_assignment FROM rater_package_items WHERE assignment = ${first.assignments[0]}`)
  const onServer = await api(server.base, 'GET', `/api/studies/${study}/items/${link.server_assignment}`, raterToken)
  assert.match(first.caseId, /^case-[0-9a-f]{10}$/, 'the rater’s copy names the case by its code')
  const text = await shown.getText()
  assert.ok(text.includes(onServer.ground_truth.diagnosis), `${text} lacks ${onServer.ground_truth.diagnosis}`)
  assert.match(text, new RegExp(`Ground truth \\(version ${onServer.ground_truth_version}\\)`))
  const locked = await $(testid('rating-locked'))
  await locked.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  assert.equal(await $(testid('reopen')).isExisting(), false)
  await shown.scrollIntoView({ block: 'center' })
  await shot('2-revealed')

  // Recorded here as a local reveal (the reopen refused by the backend itself) and on the server.
  const refusal = await invoke(browser, 'reopen_rating', { madeAs: raterId, assignment: first.assignments[0] })
  assert.equal(refusal.failure?.code, 'refused', JSON.stringify(refusal))
  assert.match(refusal.failure.message, /you saw the case's ground truth/)
  assert.equal(rows(`SELECT count(*) AS n FROM audit_log WHERE action = 'ground_truth.revealed' AND actor = '${RATER}'`)[0].n, 1)
  const item = await api(server.base, 'GET', `/api/studies/${study}/items/${link.server_assignment}`, raterToken)
  assert.ok(item.rating.revealed_at, 'the server recorded the reveal')
  assert.equal(rows(`SELECT count(*) AS n FROM team_outbox WHERE edit_json = '{"kind":"reveal"}' AND sent_at IS NOT NULL`)[0].n, 1)
  assert.equal(
    cluster.psql(`SELECT count(*) FROM applied_edits WHERE edit_id LIKE 'reveal-%'`),
    '1',
    'the reveal is stored once on the server',
  )
})

test('once the lead locks the rater, the window learns it while reading: no reveal, no reopen offered', async () => {
  await api(server.base, 'PUT', `/api/studies/${study}/raters/${RATER}/reveal-lock`, leadToken, { locked: true })
  const second = cases[1]
  await submitCase(second)
  await waitSynced('the second case’s submits')
  await openFromQueue(browser, second.assignments[0], 'rating-comment')
  // Nobody reopens the study: the sync worker's refresh brings the lead's lock (within its 30 s),
  // and the open item shows it instead of Reopen and "Show the ground truth".
  const locked = await $(testid('rating-locked'))
  await browser.waitUntil(async () => (await locked.isExisting()) && (await locked.getAttribute('data-lock')) === 'locked_by_lead', {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'the lead’s lock never reached the open item',
  })
  assert.match(await locked.getText(), /study lead has locked your submitted ratings/)
  assert.equal(await $(testid('reopen')).isExisting(), false, 'Reopen is offered to a rater the lead locked')
  assert.equal(await $(testid('reveal-truth')).isExisting(), false, '"Show the ground truth" is offered to a locked rater')
  assert.match(await $(testid('truth-closed')).getText(), /study lead has closed the ground truth to you/)
  // Kept here: the backend refuses both with no server asked, in the server's words.
  const reveal = await invoke(browser, 'reveal_ground_truth', { assignmentId: second.assignments[0] })
  assert.equal(reveal.failure?.code, 'refused', JSON.stringify(reveal))
  assert.match(reveal.failure.message, /the study lead has closed the ground truth to you for this study/)
  const reopen = await invoke(browser, 'reopen_rating', { madeAs: raterId, assignment: second.assignments[0] })
  assert.equal(reopen.failure?.code, 'refused', JSON.stringify(reopen))
  assert.match(reopen.failure.message, /study lead has locked your submitted ratings/)
  // Nothing recorded as seen: the rating may still be reopened once the lead opens it again.
  assert.equal(rows(`SELECT count(*) AS n FROM audit_log WHERE action = 'ground_truth.revealed'`)[0].n, 1)
  assert.equal(rows(`SELECT reveal_locked FROM team_server_word`)[0].reveal_locked, 1)
  await $(testid('truth-closed')).scrollIntoView({ block: 'center' })
  await shot('3-locked-by-lead')
})

/** The rater's item on the server, as "another computer" reads it. */
async function serverItem(assignment) {
  const link = rows(`SELECT server_assignment FROM rater_package_items WHERE assignment = ${assignment}`)[0]
  return { link, item: await api(server.base, 'GET', `/api/studies/${study}/items/${link.server_assignment}`, raterToken) }
}

/** Saves `comment` on the rater's item over HTTP once the window's `sent` is there, from the
 * server's version then (the window's time on task may still move it on: read again and retry). */
async function saveElsewhere(assignment, sent, comment) {
  await browser.waitUntil(async () => (await serverItem(assignment)).item.rating?.state.scores.comment === sent, {
    timeout: SYNC_TIMEOUT_MS,
    timeoutMsg: `"${sent}" never reached the server`,
  })
  for (let attempt = 0; ; attempt++) {
    const { link, item } = await serverItem(assignment)
    const scores = { ...item.rating.state.scores, comment }
    const response = await fetch(`${server.base}/api/studies/${study}/items/${link.server_assignment}/edits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${raterToken}` },
      body: JSON.stringify({
        edit_id: `another-computer-${Date.now()}`,
        base_version: item.rating.version,
        edit: { kind: 'save', rating: { scores, labels: item.rating.state.labels } },
      }),
    })
    if (response.ok) return
    assert.ok(response.status === 409 && attempt < 5, `saving elsewhere: ${response.status} ${await response.text()}`)
    await browser.pause(500)
  }
}

/** Types `text` as the item's comment in the window and waits until it is saved here. */
async function comment(text) {
  const field = await $(testid('rating-comment'))
  await field.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await field.setValue(text)
  await waitSaved(browser, text)
}

/** A conflict on the item open in the window: saved here and sent, saved elsewhere, saved here. */
async function conflict(assignment, mine, theirs, mineAgain) {
  await comment(mine)
  await saveElsewhere(assignment, mine, theirs)
  await comment(mineAgain)
  const stopped = await $(`[data-testid="team-stopped"][data-assignment="${assignment}"]`)
  await stopped.waitForExist({ timeout: SYNC_TIMEOUT_MS, timeoutMsg: 'the conflict was never shown' })
  assert.match(await stopped.getText(), /changed on the server since this computer last sent it/)
  return stopped
}

test('a stopped item keeps the server’s version: the window shows it, nothing of it is sent', async () => {
  const assignment = cases[2].assignments[0]
  await openFromQueue(browser, assignment, 'rating-comment')
  const stopped = await conflict(assignment, 'Mine, sent (e2e).', 'Theirs, from another computer (e2e).', 'Mine, refused (e2e).')
  await shot('4-stopped')
  await stopped.$(testid('resolve-keep_server')).click()
  await stopped.waitForExist({ reverse: true, timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the item stayed stopped' })
  // The item is read again (a new reading view): the field is looked up each time.
  const shownComment = () => $(testid('rating-comment')).then((f) => f.getValue()).catch(() => null)
  await browser.waitUntil(async () => (await shownComment()) === 'Theirs, from another computer (e2e).', {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `the window never showed the server's rating: ${await shownComment()}`,
  })
  await waitSynced('after keeping the server’s version')
  const { item } = await serverItem(assignment)
  assert.equal(item.rating.state.scores.comment, 'Theirs, from another computer (e2e).')
  const [kept] = rows(`SELECT resolution, discarded_json FROM team_resolutions WHERE assignment = ${assignment}`)
  assert.equal(kept.resolution, 'keep_server')
  assert.ok(kept.discarded_json.includes('Mine, refused (e2e).'), kept.discarded_json)
  await shot('5-kept-server')
})

test('a stopped item sends the window’s rating over the server’s', async () => {
  const assignment = cases[2].assignments[0]
  const stopped = await conflict(assignment, 'Mine again, sent (e2e).', 'Theirs again (e2e).', 'Mine, sent over theirs (e2e).')
  await stopped.$(testid('resolve-send_mine')).click()
  await stopped.waitForExist({ reverse: true, timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the item stayed stopped' })
  await waitSynced('after sending mine')
  const { item } = await serverItem(assignment)
  assert.equal(item.rating.state.scores.comment, 'Mine, sent over theirs (e2e).')
  assert.equal(await $(testid('rating-comment')).getValue(), 'Mine, sent over theirs (e2e).')
  const resolutions = rows(`SELECT resolution FROM team_resolutions WHERE assignment = ${assignment} ORDER BY id`).map((r) => r.resolution)
  assert.deepEqual(resolutions, ['keep_server', 'send_mine'])
  await shot('6-sent-mine')
})
