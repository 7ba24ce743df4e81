// The reading screen in the real window (WebKitGTK through tauri-driver): a new rater reads a demo
// response, labels a text span and an image location, scores every rubric row and submits; starts
// the next response; then the app process is killed with SIGKILL and started again on the same
// database, and everything the screen showed as saved must still be there, with the rater back on
// the response they were reading. A comment typed just before another reader takes over is saved
// as its reader, and an edit sent as them afterwards is refused unwritten. Run through
// scripts/e2e.sh (display, driver, NEURORATER_DB).

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync, readlinkSync } from 'node:fs'
import { APP, DB, FIRST_START_TIMEOUT_MS, LOAD_TIMEOUT_MS, becomeNewRater, invoke, openSession, screenshots, testid, switchReader, currentRater, assertTopBarFits } from './support.mjs'

// The save queue writes 250 ms after the last edit; a debug build's commit takes a little more.
const SAVE_TIMEOUT_MS = 15_000
const RATER = { name: 'Dr Ada Reader', role: 'neuroradiologist', years: '12' }
/** The reader taking over from Ada: a long name, which the one-row top bar must cut, not wrap. */
const NEXT_READER = 'Dr Annaliese Vandenberghe-Okonkwo'

let browser

before(async () => {
  browser = await openSession()
})

after(async () => {
  await browser?.deleteSession().catch(() => {})
})

const shot = (name) => screenshots(browser, 'rating')(name)
const $ = (selector) => browser.$(selector)

async function waitSaved(what) {
  await browser.waitUntil(async () => (await $(testid('save-state')).getAttribute('data-state')) === 'saved', {
    timeout: SAVE_TIMEOUT_MS,
    timeoutMsg: `${what}: the screen never showed "saved" (it shows "${await $(testid('save-state')).getText()}")`,
  })
}

async function waitReading() {
  const reading = await $(testid('reading'))
  await reading.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await $(testid('rationale')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  return reading
}

/** Rubric rows as {row: value} from the DOM ('' when unscored). */
async function rubricValues() {
  return Object.fromEntries(
    await browser.$$(testid('rubric-row')).map(async (el) => [await el.getAttribute('data-row'), await el.getAttribute('data-value')]),
  )
}

/** The side panel opens at the top: the case, the question and the model's answer in view. */
async function assertOpensAtTop(what) {
  await $(testid('rubric')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await browser.pause(300) // a late scroll (the rubric's current row) would have happened by now
  const top = await browser.execute(() => document.querySelector('.reading-scroll').scrollTop)
  assert.equal(top, 0, `${what}: the side panel opened scrolled down by ${top} px`)
  assert.ok(await $('.prompt').isDisplayed({ withinViewport: true }), `${what}: the question is out of sight`)
}

async function labels() {
  return browser.$$(testid('label-item')).map(async (el) => ({
    category: await el.getAttribute('data-category'),
    severity: await el.getAttribute('data-severity'),
    text: await el.getText(),
  }))
}

/** Focus somewhere neutral so single-key shortcuts reach the reading screen, not a text box. */
async function focusPage() {
  await browser.execute(() => {
    document.activeElement?.blur?.()
  })
}

/**
 * The app process of this run: a child of WebKitWebDriver (or tauri-driver) whose environment
 * carries this run's NEURORATER_DB. Other runs on the machine use the same binary, so the
 * process is never looked up by name.
 */
function appPid() {
  const parentOf = (pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    } catch {
      return null
    }
  }
  const commOf = (pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
    } catch {
      return ''
    }
  }
  const matches = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readlinkSync(`/proc/${entry}/exe`) !== APP) continue
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0')
      if (!env.includes(`NEURORATER_DB=${DB}`)) continue
      const parent = commOf(parentOf(entry))
      if (parent.startsWith('WebKitWebDriver') || parent.startsWith('tauri-driver')) matches.push(Number(entry))
    } catch {
      // Not ours to read, or gone meanwhile.
    }
  }
  assert.equal(matches.length, 1, `exactly one app process of this run (found ${JSON.stringify(matches)})`)
  return matches[0]
}

// What the first session acknowledged, checked after the kill.
const expected = {}

test('a new rater opens the first response of their queue', async () => {
  const form = await $(testid('new-rater'))
  await form.waitForExist({ timeout: FIRST_START_TIMEOUT_MS, interval: 500 })
  await form.$('input[name="name"]').setValue(RATER.name)
  await form.$('select[name="role"]').selectByAttribute('value', RATER.role)
  await form.$('input[name="years"]').setValue(RATER.years)
  await form.$('button[type="submit"]').click()

  await $(testid('continue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await $(testid('reading-queue')).waitForExist()
  const rows = await browser.$$(testid('queue-row')).length
  assert.ok(rows >= 2, `the demo queue has at least two responses (it has ${rows})`)
  const progress = await $(testid('queue-progress'))
  assert.equal(await progress.getProperty('max'), rows)
  assert.equal(await progress.getProperty('value'), 0)
  await shot('1-queue')
  await $(testid('continue')).click()
  const reading = await waitReading()
  expected.first = await reading.getAttribute('data-assignment')
  await assertOpensAtTop('the first response')
  assert.match(await $(testid('progress')).getText(), /^Response 1 of \d+$/)
  assert.equal(await currentRater(browser), RATER.name)
  // Blinded: nothing on the screen names a model or a grader.
  const body = await $('body').getText()
  assert.doesNotMatch(body, /grader|model-[a-z]|gpt|gemini|claude/i)
  // Nor the case's identity: the case by its code, no case id anywhere on the screen (the demo's
  // ids name the diagnosis: ms-01, stroke-02).
  assert.match(await $(testid('case-code')).getText(), /^case-[0-9a-f]{10}$/)
  const ids = JSON.parse(execFileSync('sqlite3', ['-json', DB, 'SELECT case_id FROM cases']).toString())
  assert.ok(ids.length >= 12)
  for (const { case_id: id } of ids) assert.ok(!body.includes(id), `the reading screen names the case ${id}`)
  await browser.pause(500) // let the viewer draw for the screenshot
  await shot('2-reading')
})

test('e with a selection outside the model’s texts says why, and the keys typed next score nothing', async () => {
  const before = await rubricValues()
  // Select the task's question (not a text of the model's), as a mouse would, then type as for a label.
  await browser.execute(() => {
    const prompt = document.querySelector('.reading .prompt')
    const range = document.createRange()
    range.selectNodeContents(prompt)
    window.getSelection().removeAllRanges()
    window.getSelection().addRange(range)
  })
  await browser.keys('e')
  const refusal = await $(testid('label-refusal'))
  await refusal.waitForDisplayed({ timeout: 5_000 })
  assert.match(await refusal.getText(), /outside the model’s texts/)
  await browser.keys(['r', '1'])
  await browser.keys('Enter')
  await browser.keys('2')
  await browser.pause(300)
  assert.equal(await $(testid('label-editor')).isExisting(), false, 'no label box opened')
  assert.deepEqual(await rubricValues(), before, 'the keys typed after a refused e scored the rubric')
  await shot('2b-e-outside-rationale')
  await browser.keys('Escape')
  await refusal.waitForExist({ reverse: true, timeout: 5_000 })
  await browser.execute(() => window.getSelection().removeAllRanges())
})

test('a span of the rationale is labelled as an error, and undo/redo work on it', async () => {
  const rationale = await $(testid('rationale')).getText()
  // Select the first two words past the first 10 characters, as a mouse would, through a Range.
  const picked = await browser.execute(() => {
    const el = document.querySelector('[data-testid="rationale"]')
    const text = el.textContent
    const start = text.indexOf(' ', 10) + 1
    const end = text.indexOf(' ', text.indexOf(' ', start) + 1)
    // Rendered text may be split over several text nodes: find the ones holding each end.
    const point = (offset) => {
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT)
      let seen = 0
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (offset <= seen + n.length) return [n, offset - seen]
        seen += n.length
      }
      throw new Error(`offset ${offset} is past the text`)
    }
    const range = document.createRange()
    range.setStart(...point(start))
    range.setEnd(...point(end))
    const selection = window.getSelection()
    selection.removeAllRanges()
    selection.addRange(range)
    el.dispatchEvent(new MouseEvent('mouseup', { bubbles: true }))
    return text.slice(start, end)
  })
  assert.ok(picked.trim().length > 2 && rationale.includes(picked), `selected "${picked}"`)
  await $(testid('label-selection')).waitForDisplayed()
  await browser.keys('e')
  const editor = await $(testid('label-editor'))
  await editor.waitForDisplayed()
  await shot('3-label-editor')
  await browser.keys(['r', '1'])
  await browser.keys('Enter') // picks R1 (faulty inference)
  // The definition shown is the chosen category's, not the first of the list.
  assert.match(await $(testid('category-definition')).getText(), /^R1 /)
  await browser.keys('2') // severity 2
  await $(testid('label-comment')).setValue('conclusion does not follow')
  await browser.keys('Enter') // saves from the comment, as the button's hint says
  await editor.waitForExist({ reverse: true })

  let list = await labels()
  assert.equal(list.length, 1)
  assert.equal(list[0].category, 'R1')
  assert.equal(list[0].severity, '2')
  assert.ok(list[0].text.includes(picked.trim()), `the label quotes the span: ${list[0].text}`)
  assert.equal(await $('[data-testid="rationale"] mark.hl').getText(), picked.trim())
  await waitSaved('text label')

  await focusPage()
  await browser.keys(['Control', 'z'])
  await browser.waitUntil(async () => (await labels()).length === 0, { timeout: 5_000, timeoutMsg: 'Ctrl+Z did not remove the label' })
  // Undo says what it took back, in the category's words.
  const note = await $(testid('undo-note'))
  await note.waitForDisplayed({ timeout: 5_000, timeoutMsg: 'undo said nothing' })
  assert.match(await note.getText(), /^Undone: label “[^”]+” removed\. Ctrl\+Shift\+Z redoes it\.$/)
  await shot('3b-undo-said')
  await browser.keys(['Control', 'Shift', 'z'])
  await browser.waitUntil(async () => (await labels()).length === 1, { timeout: 5_000, timeoutMsg: 'Ctrl+Shift+Z did not restore it' })
  assert.match(await note.getText(), /^Redone: label “[^”]+” added\.$/)
  await waitSaved('undo and redo')
  expected.textLabel = { category: 'R1', severity: '2', quote: picked.trim() }
})

test('an image finding is labelled with a point drawn on the image', async () => {
  await focusPage()
  await browser.keys('i')
  const editor = await $(testid('label-editor'))
  await editor.waitForDisplayed()
  await browser.keys(['p', '1'])
  await browser.keys('Enter') // P1 missed finding: needs a mark
  await browser.keys('3')
  assert.equal(await $(testid('save-label')).isEnabled(), false, 'a missed finding cannot be saved without a mark')
  await $('[data-testid="mark-field"] [data-tool="point"]').click()
  const viewport = await $('[data-testid="viewport"]')
  await browser.waitUntil(async () => (await viewport.getAttribute('data-state')) === 'ready', {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'the image never loaded',
  })
  await viewport.$('svg.marks').click() // the centre of the image
  await browser.waitUntil(async () => (await $(testid('mark-status')).getText()).includes('point on'), {
    timeout: 5_000,
    timeoutMsg: 'no point mark arrived from the viewer',
  })
  await shot('4-image-mark')
  await $(testid('save-label')).click()
  await editor.waitForExist({ reverse: true })
  const list = await labels()
  assert.deepEqual(list.map((l) => l.category), ['R1', 'P1'])
  assert.ok(list[1].text.includes('point on'), list[1].text)
  assert.ok((await browser.$$('[data-testid="viewport"] [data-testid="mark"]').length) >= 1, 'the mark is drawn on the image')
  await waitSaved('image label')
})

test('a hint over a rubric level shows while the pointer is on it and goes when it leaves', async () => {
  // Native tooltips (title) stayed on screen over the rubric in this display: none is used there.
  assert.equal(await browser.$$('[data-testid="rubric"] [title]').length, 0, 'a native tooltip in the rubric')
  const rows = await browser.$$(testid('rubric-row'))
  const level = await rows[1].$('button.level.has-tip')
  await level.scrollIntoView({ block: 'center' })
  const tip = await level.$(testid('level-tip'))
  assert.equal(await tip.isDisplayed(), false, 'the hint shows before the pointer is on the level')
  await level.moveTo()
  await browser.waitUntil(() => tip.isDisplayed(), { timeout: 5_000, timeoutMsg: 'no hint while the pointer is on a level' })
  assert.ok((await tip.getText()).length > 3)
  await shot('4b-level-hint')
  await $(testid('rating-comment')).moveTo()
  await browser.waitUntil(async () => !(await tip.isDisplayed()), { timeout: 5_000, timeoutMsg: 'the hint stayed after the pointer left' })
})

test('every rubric row is scored, the first by a click and the rest by keyboard, commented and submitted', async () => {
  await $('.rubric-row .row-label').click()
  const rows = await browser.$$(testid('rubric-row'))
  const rowCount = rows.length
  // 1–3 are levels of every row (correctness has three: correct, partly, incorrect).
  const digits = Array.from({ length: rowCount }, (_, i) => String((i % 3) + 1))
  // A click scores like a key: the next row becomes current, so the next key cannot overwrite it.
  await rows[0].$('button.level').click()
  await browser.waitUntil(async () => (await rows[1].getAttribute('data-current')) === 'true', {
    timeout: 5_000,
    timeoutMsg: 'a click on a level did not move the current row on',
  })
  assert.equal(await rows[0].getAttribute('data-value'), digits[0])
  assert.ok(await rows[1].$(testid('keys-here')).isDisplayed(), 'the current row says the keys score it')
  await shot('5-clicked-first-row')
  await focusPage()
  for (const d of digits.slice(1)) await browser.keys(d)
  await browser
    .waitUntil(async () => Object.values(await rubricValues()).every((v) => v !== ''), { timeout: 5_000 })
    .catch(() => {})
  const values = await rubricValues()
  await shot('5-scored')
  assert.deepEqual(
    Object.values(values),
    digits.map((d) => d),
    `digits ${digits.join(' ')} score the rows in order: ${JSON.stringify(values)}`,
  )
  await $(testid('rating-comment')).setValue('Read in the e2e test.')
  await waitSaved('rubric')
  expected.firstRubric = values

  await focusPage()
  await browser.keys(['Control', 'Enter'])
  await $(testid('submitted')).waitForExist({ timeout: SAVE_TIMEOUT_MS })
  assert.equal(await $(testid('reading')).getAttribute('data-status'), 'submitted')
  await shot('6-submitted')
})

test('the next response is started, then the app is killed mid-edit and restarted', async () => {
  await focusPage()
  await browser.keys('n')
  await browser.waitUntil(async () => (await $(testid('progress')).getText()).startsWith('Response 2 of'), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'n did not move to response 2',
  })
  const reading = await waitReading()
  expected.second = await reading.getAttribute('data-assignment')
  await assertOpensAtTop('the next response')
  assert.notEqual(expected.second, expected.first)
  await $('.rubric-row .row-label').click()
  await browser.keys('4')
  const comment = await $(testid('rating-comment'))
  await comment.setValue('partial: first impression')
  await waitSaved('partial rating')
  expected.secondRubric = await rubricValues()
  expected.secondComment = 'partial: first impression'

  // Submitting a partial rating is refused, and the screen names what is missing.
  await focusPage()
  await browser.keys(['Control', 'Enter'])
  const problem = await $(testid('submit-problem'))
  await problem.waitForDisplayed({ timeout: SAVE_TIMEOUT_MS })
  const missing = await problem.getText()
  assert.match(missing, /overall|correctness|confidence/i, `the refusal names missing fields: ${missing}`)
  assert.equal(await $(testid('reading')).getAttribute('data-status'), 'draft')
  // The cheat sheet opens on "?" and closes on Escape.
  await browser.keys('?')
  await $(testid('cheat-sheet')).waitForDisplayed({ timeout: 5_000 })
  await shot('7-cheat-sheet')
  await browser.keys('Escape')
  await $(testid('cheat-sheet')).waitForExist({ reverse: true, timeout: 5_000 })
  await browser.pause(300) // software GL repaints late; the screenshot should show the closed sheet
  await shot('7-partial')

  // Mid-edit: more typing goes in and the process dies within the save queue's quiet time.
  await comment.addValue(' and more')
  const pid = appPid()
  process.kill(pid, 'SIGKILL')
  await browser.deleteSession().catch(() => {})
  browser = await openSession()

  await $(testid('continue-as')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  assert.equal(await $(testid('continue-as')).getText(), `Continue as ${RATER.name}`)
  await $(testid('continue-as')).click()
  const again = await waitReading()
  assert.equal(await again.getAttribute('data-assignment'), expected.second, 'back on the response being read')
  assert.match(await $(testid('progress')).getText(), /^Response 2 of \d+$/)
  assert.deepEqual(await rubricValues(), expected.secondRubric)
  const stored = await $(testid('rating-comment')).getValue()
  assert.ok(
    stored === expected.secondComment || stored === `${expected.secondComment} and more`,
    `the acknowledged comment survived (found "${stored}")`,
  )
  await shot('8-after-kill')
})

test('after the restart the submitted response keeps its labels, mark and scores', async () => {
  await focusPage()
  await browser.keys('p')
  await browser.waitUntil(async () => (await $(testid('progress')).getText()).startsWith('Response 1 of'), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'p did not move back to response 1',
  })
  const reading = await waitReading()
  assert.equal(await reading.getAttribute('data-assignment'), expected.first)
  assert.equal(await reading.getAttribute('data-status'), 'submitted')
  assert.deepEqual(await rubricValues(), expected.firstRubric)
  const list = await labels()
  assert.deepEqual(
    list.map((l) => [l.category, l.severity]),
    [
      [expected.textLabel.category, expected.textLabel.severity],
      ['P1', '3'],
    ],
  )
  assert.equal(await $('[data-testid="rationale"] mark.hl').getText(), expected.textLabel.quote)
  assert.ok(list[1].text.includes('point on'))
  assert.equal(await $(testid('rating-comment')).getValue(), 'Read in the e2e test.')
  await browser.pause(500)
  await shot('9-restored')

  // Submitted, but other responses of this case are still in the queue: the ground truth stays
  // closed, and the reason says so.
  await $(testid('reveal-truth')).click()
  const problem = await $(testid('reveal-problem'))
  await problem.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  assert.match(await problem.getText(), /still has \d+ response\(s\) of case \S+ to rate/)
  assert.equal(await $(testid('revealed-truth')).isExisting(), false)
})

test('the queue filters its responses by state, with a count for each', async () => {
  await $(testid('show-queue')).click()
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  const total = (await browser.$$(testid('queue-row'))).length
  const filterButton = (key) => $(`[data-testid="queue-filter"] button[data-filter="${key}"]`)
  const shownStates = async () => {
    const rows = await browser.$$(testid('queue-row'))
    const states = []
    for (const row of rows) states.push(await row.getAttribute('data-status'))
    return states
  }
  // Response 1 was submitted and response 2 left as a draft above; the rest are untouched.
  await filterButton('submitted').click()
  assert.deepEqual(await shownStates(), ['submitted'])
  assert.match(await filterButton('submitted').getText(), /Submitted\s+1$/)
  await filterButton('draft').click()
  assert.deepEqual(await shownStates(), ['draft'])
  await filterButton('to_read').click()
  const untouched = await shownStates()
  assert.equal(untouched.length, total - 2)
  assert.ok(untouched.every((state) => state === 'not_started'))
  await shot('10-queue-filtered')
  await filterButton('all').click()
  assert.equal((await browser.$$(testid('queue-row'))).length, total)
})

test('while a clinician reads, calibration, curation and the case list stay closed, in the window and in the backend', async () => {
  await $(testid('mode-calibration')).click()
  const gate = await $(testid('blinded-gate'))
  await gate.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  assert.match(await gate.getText(), new RegExp(`${RATER.name} is reading blinded as a ${RATER.role}`))
  await shot('10-blinded-gate')
  // The UI hides the view; the backend must refuse it too, whatever the page asks for.
  const refusal = await browser.execute(async () => {
    try {
      await window.__TAURI_INTERNALS__.invoke('calibration_report', { studyId: 'neurorater-demo', grader: 'demo-grader-v1' })
      return null
    } catch (error) {
      return error
    }
  })
  assert.equal(refusal?.code, 'refused', JSON.stringify(refusal))
  assert.match(refusal.message, /reads blinded/)

  // The case list shows every model's answer side by side: closed too, in both places.
  await $(testid('mode-cases')).click()
  await browser.waitUntil(async () => /The case list is closed while you read/.test(await $(testid('blinded-gate')).getText()), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'the case list opened for a blinded reader',
  })
  assert.equal(await $('.case-row').isExisting(), false, 'no case row behind the gate')
  await shot('11-case-list-gate')
  const answers = await browser.execute(async () => {
    try {
      return await window.__TAURI_INTERNALS__.invoke('list_responses', { taskKey: 1 })
    } catch (error) {
      return error
    }
  })
  assert.equal(answers?.code, 'refused', JSON.stringify(answers))
  await $(testid('mode-calibration')).click()
  await browser.waitUntil(async () => /Calibration is closed/.test(await $(testid('blinded-gate')).getText()), {
    timeout: LOAD_TIMEOUT_MS,
  })

  await $(testid('leave-reading')).click()
  await browser.waitUntil(async () => !(await $(testid('blinded-gate')).isExisting()), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'leaving reading mode did not open the calibration view',
  })
  assert.equal(await $(testid('current-rater')).isExisting(), false, 'nobody is reading any more')
})

const rows = (query) => JSON.parse(execFileSync('sqlite3', ['-json', DB, query]).toString().trim() || '[]')

test('a comment typed just before another reader takes over is saved as its reader, and nothing is written as them after', async () => {
  // The test before left reading mode: the first rater chooses themselves again.
  const [ada] = rows(`SELECT id FROM raters WHERE name = '${RATER.name}'`)
  await $(testid('mode-reading')).click()
  await $(`button.rater-choice[data-rater-id="${ada.id}"]`).click()
  // Reading resumes on the response Ada left; the queue is one click away.
  const showQueue = await $(testid('show-queue'))
  await showQueue.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await showQueue.click()
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await $('tr.queue-row[data-status="not_started"] button').click()
  const reading = await waitReading()
  const assignment = Number(await reading.getAttribute('data-assignment'))
  const comment = 'Typed just before the switch.'
  await $(testid('rating-comment')).setValue(comment)
  // At once, without waiting for "saved": the window writes Ada's edit before Bo takes over.
  // Bo's name is long: the top bar keeps its one row and cuts the name, not the buttons after it.
  await switchReader(browser)
  await becomeNewRater(browser, NEXT_READER, 'neurologist', 3)
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await assertTopBarFits(browser)
  await shot('12-switched-reader')
  const stored = () =>
    rows(
      `SELECT ra.name, g.comment FROM ratings g JOIN assignments a ON a.response = g.response AND a.rater = g.rater
          AND a.read_no = g.read_no JOIN raters ra ON ra.id = g.rater WHERE a.id = ${assignment}`,
    )
  assert.deepEqual(stored(), [{ name: RATER.name, comment }])

  // An edit sent as Ada now (a write still queued somewhere) is refused, and nothing is written.
  const late = await invoke(browser, 'save_rating', { madeAs: ada.id, assignment, edit: { comment: 'sent after the switch' } })
  assert.equal(late.failure?.code, 'reader_changed', JSON.stringify(late))
  assert.match(late.failure.message, new RegExp(`made as ${RATER.name}, and ${NEXT_READER} is the reader here now`))
  assert.deepEqual(stored(), [{ name: RATER.name, comment }])
  assert.deepEqual(rows(`SELECT g.id FROM ratings g JOIN raters ra ON ra.id = g.rater WHERE ra.name = '${NEXT_READER}'`), [])
})
