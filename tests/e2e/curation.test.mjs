// Curation in the real window (WebKitGTK through tauri-driver): a curator adds a lesion to the
// demo ground truth of ms-01, marks it on the FLAIR, saves a draft and submits it for review; a
// second curator finalises it. The version history shows both versions with who did what, the
// diff names the new lesion, and `neurorater export --what ground-truth --format bundle` run on
// the same database holds the lesion with its mark in patient coordinates. Then two curators
// curate the case independently, each on their own branch — one changes the diagnosis, the other
// marks the added lesion somewhere else under the same id — and a merge of the disagreements,
// one side chosen per field and then edited, is saved as a consensus draft of main.
// Run through scripts/e2e.sh (display, driver, NEURORATER_DB).

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { APP, DB, LOAD_TIMEOUT_MS, becomeNewRater, openSession, screenshots, testid, switchReader } from './support.mjs'

// The CLI is built beside the app (same target directory).
const CLI = APP ? join(dirname(APP), 'neurorater') : ''
const LESION = 'Right frontal juxtacortical plaque (added in e2e)'
const LESION_ELSEWHERE = 'Left parietal plaque (second curator)'
const REX_DIAGNOSIS = 'Relapsing-remitting multiple sclerosis (independent curation)'

let browser

before(async () => {
  browser = await openSession()
})

after(async () => {
  await browser?.deleteSession().catch(() => {})
})

const shot = (name) => screenshots(browser, 'curation')(name)
const $ = (selector) => browser.$(selector)
/** The form scrolls; a button below the fold is brought into view before the click. */
async function press(id) {
  const button = await $(testid(id))
  await button.scrollIntoView({ block: 'center' })
  await button.click()
}

async function openCuration() {
  await $(testid('mode-curation')).click()
  try {
    await $(testid('gt-diagnosis')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  } catch (e) {
    await shot('failed-to-open')
    throw new Error(`the curation form never appeared; the page says: ${await $('main').getText()}`, { cause: e })
  }
}

/** The latest version of main as the form shows it: "2 in_review". */
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

/** Where an element is on screen, and whether all of it is inside the window. */
async function placeOf(selector) {
  return browser.execute((sel) => {
    const box = document.querySelector(sel).getBoundingClientRect()
    return { top: box.top, bottom: box.bottom, inWindow: box.top >= 0 && box.bottom <= window.innerHeight }
  }, selector)
}

/** What an action said is shown beside the button that did it, both in the window. */
async function assertMessageBeside(button) {
  const [message, pressed] = [await placeOf(testid('curation-notice')), await placeOf(testid(button))]
  assert.ok(message.inWindow && pressed.inWindow, `message ${JSON.stringify(message)} and button ${JSON.stringify(pressed)} both in sight`)
  const gap = Math.max(0, message.top - pressed.bottom, pressed.top - message.bottom)
  assert.ok(gap < 120, `the message is ${gap} px from the ${button} button`)
}

async function historyRows() {
  return browser.$$(testid('gt-version')).map((row) => row.getText())
}

test('a curator marks a lesion on the image and submits the draft for review', async () => {
  await becomeNewRater(browser, 'Dr Cora Curator', 'curator')
  // A curator lands on Curation, not on a reading queue that is empty for them.
  await $(testid('gt-diagnosis')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'a new curator did not land on Curation' })
  assert.match(await $(testid('mode-curation')).getAttribute('class'), /\bactive\b/)
  assert.equal(await $(testid('reading-queue')).isExisting(), false)
  await openCuration()
  // ms-01 is the first case; the bundle's ground truth is its version 1, final.
  await waitStatus('1 final')
  await browser.waitUntil(
    async () => {
      const states = await browser.$$(testid('viewport')).map((el) => el.getAttribute('data-state'))
      return states.length > 0 && states.every((s) => s === 'ready')
    },
    { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the viewer never became ready' },
  )
  const before = await browser.$$(testid('gt-lesion')).length
  await press('gt-add-lesion')
  const lesions = await browser.$$(testid('gt-lesion'))
  assert.equal(lesions.length, before + 1)
  const added = lesions[lesions.length - 1]
  await added.$(testid('gt-lesion-description')).setValue(LESION)
  // Adding a lesion starts marking it; an ellipse drag on the first viewport draws the mark.
  const layer = await $(`${testid('viewport')} svg.marks`)
  await browser.action('pointer').move({ origin: layer, x: -40, y: -30 }).down().move({ origin: layer, x: -15, y: -12 }).up().perform()
  await browser.waitUntil(async () => (await added.getText()).includes('1 mark(s)'), {
    timeout: 10_000,
    timeoutMsg: 'the drawn mark did not reach the lesion',
  })
  await shot('1-lesion-marked')
  await press('gt-save')
  await waitStatus('2 draft')
  await assertMessageBeside('gt-save')
  await press('gt-submit')
  await waitStatus('2 in_review')
  await assertMessageBeside('gt-save')
  // The author is not offered the review of their own version, and is told why.
  const own = await $(testid('gt-review-own'))
  await own.waitForExist({ timeout: 10_000 })
  assert.match(await own.getText(), /second curator reviews and finalises it/)
  assert.equal(await $(testid('gt-finalise')).isExisting(), false, 'Finalise offered to the author')
  await own.scrollIntoView({ block: 'center' })
  await shot('2-submitted')
})

test('a second curator finalises; history, diff and the export hold the lesion', async () => {
  await switchReader(browser)
  await becomeNewRater(browser, 'Dr Rex Reviewer', 'curator')
  await openCuration()
  await waitStatus('2 in_review')
  // The case list shows where a review waits.
  const listed = await $(`${testid('curation-case')}[data-case="ms-01"]`)
  assert.equal(await listed.getAttribute('data-status'), 'in_review')
  assert.match(await listed.getText(), /in review/)
  // The review waiting for him is in sight as the case opens, without scrolling the form.
  assert.equal(await browser.execute(() => document.querySelector('[data-testid="curation-form"]').scrollTop), 0)
  assert.ok((await placeOf(testid('gt-review'))).inWindow, 'the review of v2 is out of sight on opening the case')
  await shot('2b-review-in-sight')
  await $(testid('gt-review-comment')).setValue('Plaque confirmed on FLAIR.')
  await press('gt-finalise')
  await waitStatus('2 final')
  assert.equal(await $(testid('curation-notice')).getText(), 'Finalised.')
  assert.ok((await placeOf(testid('curation-notice'))).inWindow, 'the Finalised message is out of sight')

  const rows = await historyRows()
  assert.equal(rows.length, 2, JSON.stringify(rows))
  assert.match(rows[0], /v2.*main.*Final.*Dr Cora Curator/)
  assert.match(rows[0], /Dr Cora Curator: submitted; Dr Rex Reviewer: finalised \(“Plaque confirmed on FLAIR\.”\)/)
  assert.match(rows[1], /v1.*main.*Final.*the bundle/)

  await shot('3-finalised-history')
  await press('gt-diff')
  const diff = await $(testid('gt-diff-table'))
  await diff.waitForExist({ timeout: 10_000 })
  const diffText = await diff.getText()
  assert.match(diffText, /lesions\[L\d+\]/)
  assert.ok(diffText.includes(LESION), diffText)
  await diff.scrollIntoView({ block: 'center' })
  await shot('4-diff')

  // The CLI reads the same database file (WAL: the app's committed writes are visible).
  assert.ok(existsSync(CLI), `build the CLI beside the app first (cargo build -p neurorater-cli): no ${CLI}`)
  const out = join(mkdtempSync(join(tmpdir(), 'neurorater-gt-')), 'gt')
  execFileSync(CLI, ['export', '--what', 'ground-truth', '--format', 'bundle', '--out', out, '--db', DB])
  const file = JSON.parse(readFileSync(join(out, 'cases', 'ms-01.json'), 'utf8'))
  assert.equal(file.version, 2)
  assert.equal(file.status, 'final')
  const lesion = file.ground_truth.lesions.find((l) => l.description === LESION)
  assert.ok(lesion, 'the exported ground truth has the new lesion')
  assert.equal(lesion.marks.length, 1)
  assert.equal(lesion.marks[0].kind, 'ellipse')
  assert.equal(lesion.marks[0].points_lps_mm.length, 3)
  for (const point of lesion.marks[0].points_lps_mm) {
    assert.ok(point.every((c) => Number.isFinite(c) && Math.abs(c) < 200), `a point in patient mm: ${point}`)
  }
  assert.ok(file.key_image_files.length > 0 && existsSync(join(out, file.key_image_files[0].png)))
})

async function waitNotice(pattern) {
  await browser.waitUntil(async () => pattern.test(await $(testid('curation-notice')).getText().catch(() => '')), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `no notice matching ${pattern}; the form says: ${await $(testid('curation-form')).getText().catch(() => '?')}`,
  })
}

async function workOnOwnBranch(branch) {
  const select = await $(testid('gt-branch'))
  await select.scrollIntoView({ block: 'center' })
  await select.selectByAttribute('value', branch)
  await browser.waitUntil(async () => (await select.getValue()) === branch, { timeout: 10_000 })
}

test('differential names are read whole and every evidence box says what it holds', async () => {
  await openCuration()
  const fields = await browser.execute(() => [
    ...[...document.querySelectorAll('[data-testid="gt-differential-name"]')].map((input) => ({
      what: input.value,
      // Wider than its box, or a one-line field stretched tall.
      cut: input.scrollWidth > input.clientWidth + 1 || input.clientHeight > 60,
    })),
    ...[...document.querySelectorAll('[data-testid="gt-differential"] textarea')].map((box) => ({
      what: box.labels[0]?.textContent.trim() ?? '',
      cut: false,
    })),
  ])
  assert.ok(fields.length >= 3, JSON.stringify(fields))
  for (const field of fields) {
    assert.ok(field.what !== '', `an evidence box without a label: ${JSON.stringify(fields)}`)
    assert.equal(field.cut, false, `"${field.what}" is cut off or stretched: ${JSON.stringify(fields)}`)
  }
  assert.ok(fields.some((f) => /^Supporting/.test(f.what)) && fields.some((f) => /^Opposing/.test(f.what)), JSON.stringify(fields))
  await (await $(testid('gt-differential'))).scrollIntoView({ block: 'center' })
  await shot('4b-differential')
})

test('two independent curations are compared side by side and merged into a consensus draft', async () => {
  // Rex (a curator) changes the diagnosis on his own branch.
  await openCuration()
  await waitStatus('2 final')
  await workOnOwnBranch('dr-rex-reviewer')
  // An own curation is not submitted by itself, and the form says so where Submit would be.
  assert.equal(await $(testid('gt-submit')).isExisting(), false)
  assert.match(await $(testid('gt-branch-hint')).getText(), /compare the two .* consensus draft of main/)
  assert.ok((await placeOf(testid('gt-branch-hint'))).inWindow, 'the hint is out of sight')
  await $(testid('gt-diagnosis')).setValue(REX_DIAGNOSIS)
  await press('gt-save')
  await waitNotice(/own curation \(dr-rex-reviewer\)/)
  await assertMessageBeside('gt-save')
  // The heading names the draft being worked on, not main's final version.
  // (Headings are set in capitals: compared in lower case.)
  await browser.waitUntil(async () => (await $(testid('gt-branch-status')).getText().catch(() => '')).toLowerCase() === 'v3 · draft · dr-rex-reviewer', {
    timeout: 10_000,
    timeoutMsg: `the heading reads "${await $(testid('gt-heading')).getText()}"`,
  })
  assert.doesNotMatch(await $(testid('gt-heading')).getText(), /final/i)
  assert.equal(await status(), '2 final', 'main is still v2, final')
  await shot('4c-own-curation-saved')

  // Ines marks the lesion added above somewhere else, under the same id.
  await switchReader(browser)
  await becomeNewRater(browser, 'Dr Ines Independent', 'curator')
  await openCuration()
  await waitStatus('2 final')
  await workOnOwnBranch('dr-ines-independent')
  const lesions = await browser.$$(testid('gt-lesion'))
  const last = lesions[lesions.length - 1]
  const lesionId = (await last.$('strong').getText()).trim()
  await last.$('button=Remove').click()
  await press('gt-add-lesion')
  const again = (await browser.$$(testid('gt-lesion'))).at(-1)
  assert.equal((await again.$('strong').getText()).trim(), lesionId, 'the new lesion takes the freed id')
  await again.$(testid('gt-lesion-description')).setValue(LESION_ELSEWHERE)
  const layer = await $(`${testid('viewport')} svg.marks`)
  await browser.action('pointer').move({ origin: layer, x: 30, y: 20 }).down().move({ origin: layer, x: 50, y: 36 }).up().perform()
  await browser.waitUntil(async () => (await again.getText()).includes('1 mark(s)'), {
    timeout: 10_000,
    timeoutMsg: 'the drawn mark did not reach the lesion',
  })
  await press('gt-save')
  await waitNotice(/own curation \(dr-ines-independent\)/)

  // The comparison offers the two branches' latest versions: Rex's v3 as A, Ines's v4 as B.
  assert.equal(await $(testid('gt-compare-a')).getValue(), '3')
  assert.equal(await $(testid('gt-compare-b')).getValue(), '4')
  await press('gt-compare-run')
  const table = await $(testid('gt-disagreements'))
  await table.waitForExist({ timeout: 10_000 })
  const rows = await browser.$$(testid('gt-disagreement'))
  const units = []
  for (const row of rows) units.push(await row.getAttribute('data-unit'))
  assert.deepEqual(units, ['diagnosis', `lesions[${lesionId}]`])
  const lesionRow = await rows[1].getText()
  assert.match(lesionRow, /the marks do not overlap: two different places; differs in description, marks/)
  assert.ok(lesionRow.includes(LESION) && lesionRow.includes(LESION_ELSEWHERE), lesionRow)
  assert.match(await rows[0].getText(), new RegExp(REX_DIAGNOSIS.replace(/[()]/g, '\\$&')))
  // Nothing merges until every disagreement has a side.
  assert.equal(await $(testid('gt-merge')).isEnabled(), false)
  await table.scrollIntoView({ block: 'center' })
  await shot('5-disagreements')

  await rows[0].$(testid('gt-pick-a')).click()
  await rows[1].$(testid('gt-pick-b')).click()
  await press('gt-merge')
  await $(testid('gt-consensus-banner')).waitForExist({ timeout: 10_000 })
  assert.equal(await $(testid('gt-diagnosis')).getValue(), REX_DIAGNOSIS)
  const merged = []
  for (const input of await browser.$$(testid('gt-lesion-description'))) merged.push(await input.getValue())
  assert.ok(merged.includes(LESION_ELSEWHERE) && !merged.includes(LESION), JSON.stringify(merged))
  // The curator edits the merge before saving it.
  const consensusDiagnosis = 'Relapsing-remitting multiple sclerosis'
  await $(testid('gt-diagnosis')).setValue(consensusDiagnosis)
  await shot('6-merged-into-form')
  await press('gt-save')
  await waitStatus('5 draft')

  const history = await historyRows()
  assert.match(history[0], /v5.*main.*Draft.*Dr Ines Independent \(consensus\)/)
  assert.match(history[1], /v4.*dr-ines-independent.*Draft.*Dr Ines Independent/)
  assert.match(history[2], /v3.*dr-rex-reviewer.*Draft.*Dr Rex Reviewer/)
  assert.equal(await $(testid('gt-diagnosis')).getValue(), consensusDiagnosis)
  const historyTable = await $(testid('gt-history'))
  await historyTable.scrollIntoView({ block: 'center' })
  await shot('7-consensus-in-history')

  // The audit log has the consensus with who saved it.
  const audit = execFileSync('sqlite3', [
    DB,
    "SELECT actor || '|' || after_json FROM audit_log WHERE action = 'ground_truth.version' ORDER BY id DESC LIMIT 1",
  ]).toString()
  assert.match(audit, /^Dr Ines Independent\|.*"source":"consensus"/)
})

test('edits left unsaved on a case are there on coming back, marked, until saved or discarded', async () => {
  const cases = await browser.$$(testid('curation-case'))
  const [first, second] = [await cases[0].getAttribute('data-case'), await cases[1].getAttribute('data-case')]
  const caseButton = (id) => $(`${testid('curation-case')}[data-case="${id}"]`)
  const code = await $(testid('gt-code'))
  const stored = await code.getValue()
  await code.setValue('G35.0')
  await $(testid('gt-unsaved')).waitForDisplayed({ timeout: 5_000 })
  assert.equal(await (await caseButton(first)).getAttribute('data-unsaved'), 'true')

  // Leaving the case keeps what was typed; the message about the first case does not follow.
  await (await caseButton(second)).click()
  await browser
    .waitUntil(async () => (await $(testid('gt-heading')).getAttribute('data-case').catch(() => '')) === second, { timeout: LOAD_TIMEOUT_MS })
    .catch(async (e) => {
      await shot('failed-to-switch-case')
      throw new Error(`the form never showed ${second}; it says: ${await $(testid('curation-form')).getText()}`, { cause: e })
    })
  assert.equal(await $(testid('curation-notice')).isExisting(), false, 'a notice about the case left behind')
  assert.equal(await $(testid('gt-unsaved')).isExisting(), false)
  await shot('8-other-case-first-marked-unsaved')

  await (await caseButton(first)).click()
  await browser.waitUntil(async () => (await $(testid('gt-code')).getValue().catch(() => '')) === 'G35.0', {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'the typed code was lost on coming back to the case',
  })
  await waitNotice(/unsaved changes are back \(started from v5\)/)
  assert.ok(await $(testid('gt-unsaved')).isDisplayed())
  await shot('9-unsaved-edit-back')

  await press('gt-discard')
  await browser.waitUntil(async () => (await $(testid('gt-code')).getValue()) === stored, { timeout: 5_000 })
  assert.equal(await $(testid('gt-unsaved')).isExisting(), false)
  assert.equal(await (await caseButton(first)).getAttribute('data-unsaved'), 'false')
})
