// Error labels on every text of a consultation in the real window (WebKitGTK through tauri-driver):
// a rater opens a level-3 response of the demo (a consultation with turns), labels anchoring (R4)
// on a span of the model's last turn and a hallucination (P3) on a span of its answer, and the
// labels are stored with the text they lie in; opened again, each highlight is in its own text and
// nowhere else. A follow-up that brought another series (the demo metastasis case shows a T2 slice
// with it) takes the viewer to that slice. Run through scripts/e2e.sh (display, driver, NEURORATER_DB).

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import {
  DB,
  LOAD_TIMEOUT_MS,
  backToCaseList,
  becomeNewRater,
  openFromQueue,
  openSession,
  screenshots,
  testid,
  waitSaved,
} from './support.mjs'

const RATER = 'Dr Tess Turner'

let browser

before(async () => {
  browser = await openSession()
})

after(async () => {
  // Back on the study's case list out of reading mode, as scale.test.mjs ends: the next file's
  // app starts where this one left (viewer.test.mjs waits for the case table).
  // The session ends even when the way back fails: left open, it would refuse every later
  // file's session ("Maximum number of active sessions").
  try {
    if (browser) await backToCaseList(browser)
  } finally {
    await browser?.deleteSession().catch(() => {})
  }
})

const shot = (name) => screenshots(browser, 'turns')(name)
const $ = (selector) => browser.$(selector)
const rows = (query) => JSON.parse(execFileSync('sqlite3', ['-json', DB, query]).toString().trim() || '[]')

// The consultation the test reads, another item to leave it for, and what was labelled.
const chosen = {}

/** Selects words `first`..`first + count` of the element with this test id, as a mouse would. */
async function selectWords(id, first, count) {
  return browser.execute(
    (id, first, count) => {
      const el = document.querySelector(`[data-testid="${id}"]`)
      const text = el.textContent
      const words = [...text.matchAll(/\S+/g)]
      const from = words[Math.min(first, words.length - 1)]
      const to = words[Math.min(first + count - 1, words.length - 1)]
      const [start, end] = [from.index, to.index + to[0].length]
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
    },
    id,
    first,
    count,
  )
}

/** Labels the current selection through the editor, by keys as a rater would. */
async function labelSelection(codeKeys, severity, comment) {
  await $(testid('label-selection')).waitForDisplayed()
  await browser.keys('e')
  const editor = await $(testid('label-editor'))
  await editor.waitForDisplayed()
  await browser.keys(codeKeys)
  await browser.keys('Enter')
  await browser.keys(severity)
  await $(testid('label-comment')).setValue(comment)
  await browser.keys('Enter')
  await editor.waitForExist({ reverse: true })
}

/** The highlighted text in each labellable text of the screen, by its test id. */
async function highlights() {
  return browser.execute(() =>
    Object.fromEntries(
      [...document.querySelectorAll('[data-place]')]
        .map((el) => [el.getAttribute('data-testid'), [...el.querySelectorAll('mark.hl')].map((m) => m.textContent).join('|')])
        .filter(([, marked]) => marked !== ''),
    ),
  )
}

async function listed() {
  return browser.$$(testid('label-item')).map(async (el) => ({
    category: await el.getAttribute('data-category'),
    place: await el.getAttribute('data-text-place'),
    text: await el.getText(),
  }))
}

test('a rater opens a consultation: the answer and every turn are texts to label', async () => {
  await becomeNewRater(browser, RATER, 'neurologist', 7)
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  const [rater] = rows(`SELECT id FROM raters WHERE name = '${RATER}'`)
  chosen.rater = rater.id
  const open = rows(
    `SELECT a.id, r.turns_json IS NOT NULL AS consultation FROM assignments a
       JOIN assignment_plans p ON a.plan = p.id JOIN responses r ON a.response = r.id
      WHERE a.rater = ${rater.id} AND (a.not_before IS NULL OR a.not_before <= date('now'))
      ORDER BY p.id, a.position`,
  )
  const consultation = open.find((a) => a.consultation)
  assert.ok(consultation, 'the demo queue holds a level-3 consultation open now')
  chosen.assignment = consultation.id
  chosen.other = open.find((a) => a.id !== consultation.id).id
  await openFromQueue(browser, chosen.assignment, 'answer')
  const turns = await browser.$$('[data-testid^="turn-"][data-place]').length
  assert.ok(turns >= 2, `the consultation shows its turns as texts (${turns})`)
  // The model's last turn: where a kept first hypothesis shows.
  chosen.turn = await browser.execute(() => {
    const last = [...document.querySelectorAll('.dialogue .turn-assistant [data-place]')].pop()
    return Number(last.getAttribute('data-place').slice('turn-'.length))
  })
  await shot('1-consultation')
})

test('anchoring is labelled on a span of a turn and a hallucination on the answer', async () => {
  chosen.turnQuote = await selectWords(`turn-${chosen.turn}`, 1, 3)
  await labelSelection(['r', '4'], '2', 'kept the first impression after the follow-up')
  chosen.answerQuote = await selectWords('answer', 0, 1)
  await labelSelection(['p', '3'], '1', 'not on the images')
  await waitSaved(browser, 'two text labels')

  assert.deepEqual(await highlights(), { [`turn-${chosen.turn}`]: chosen.turnQuote, answer: chosen.answerQuote })
  const list = await listed()
  assert.deepEqual(
    list.map((l) => [l.category, l.place]),
    [
      ['R4', `turn-${chosen.turn}`],
      ['P3', 'answer'],
    ],
  )
  assert.ok(list[0].text.includes(`in turn ${chosen.turn + 1}: “${chosen.turnQuote}”`), list[0].text)
  assert.ok(list[1].text.includes(`in the answer: “${chosen.answerQuote}”`), list[1].text)
  await browser.pause(300)
  await shot('2-labelled')

  // Stored with the text each lies in, and quoting it there.
  const stored = rows(
    `SELECT e.category, e.span_text, e.span_turn, e.span_start, e.span_end, r.answer, r.turns_json
       FROM error_labels e JOIN ratings g ON e.rating = g.id JOIN responses r ON g.response = r.id
       JOIN assignments a ON a.response = g.response AND a.rater = g.rater
      WHERE a.id = ${chosen.assignment} ORDER BY e.id`,
  )
  assert.deepEqual(
    stored.map((l) => [l.category, l.span_text, l.span_turn]),
    [
      ['R4', 'turn', chosen.turn],
      ['P3', 'answer', null],
    ],
  )
  const turnText = JSON.parse(stored[0].turns_json)[chosen.turn].content
  assert.equal(turnText.slice(stored[0].span_start, stored[0].span_end), chosen.turnQuote)
  assert.equal(stored[1].answer.slice(stored[1].span_start, stored[1].span_end), chosen.answerQuote)
})

test('opened again, each label is shown in its own text', async () => {
  await openFromQueue(browser, chosen.other, 'answer')
  assert.deepEqual(await highlights(), {}, 'another response shows none of them')
  await openFromQueue(browser, chosen.assignment, 'answer')
  await browser.waitUntil(async () => (await browser.$$(testid('label-item')).length) === 2, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'the two labels were not shown again',
  })
  assert.deepEqual(await highlights(), { [`turn-${chosen.turn}`]: chosen.turnQuote, answer: chosen.answerQuote })
  assert.deepEqual(
    (await listed()).map((l) => [l.category, l.place]),
    [
      ['R4', `turn-${chosen.turn}`],
      ['P3', 'answer'],
    ],
  )
  await $(`[data-testid="turn-${chosen.turn}"] mark.hl`).scrollIntoView({ block: 'center' })
  await browser.pause(300)
  await shot('3-reopened')
})

test('a follow-up that brought another series shows its image in the viewer', async () => {
  // The demo's metastasis consultation: its follow-up turn shows a T2 slice (demo/src/catalogue.rs).
  const [item] = rows(
    `SELECT a.id, r.turns_json FROM assignments a JOIN responses r ON a.response = r.id
      WHERE a.rater = ${chosen.rater} AND r.turns_json LIKE '%"key_images"%'
        AND (a.not_before IS NULL OR a.not_before <= date('now'))
      ORDER BY a.position LIMIT 1`,
  )
  assert.ok(item, 'the demo queue holds a consultation whose follow-up shows images')
  const turns = JSON.parse(item.turns_json)
  const turn = turns.findIndex((t) => (t.key_images ?? []).length > 0)
  const [shown] = turns[turn].key_images
  await openFromQueue(browser, item.id, 'answer')

  const button = await $(`[data-testid="turn-images"][data-turn="${turn}"]`)
  await button.waitForDisplayed({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the turn offers no images' })
  assert.match(await button.getText(), new RegExp(`T2 slice ${shown.slice + 1}$`))
  // The key-image bar lists the task's key image, then the turn's.
  assert.equal(await browser.$$(testid('key-image')).length, 2)
  await button.click()
  const viewport = await $(`[data-testid="viewport"][data-series="${shown.series}"]`)
  await viewport.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: `no viewport came to series ${shown.series}` })
  const badge = await viewport.$(testid('key-badge'))
  await badge.waitForDisplayed({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the viewport did not go to the turn’s slice' })
  assert.equal(await badge.getText(), 'Key image 1', 'the first of this series’ key images: the turn’s')
  const active = await browser.$$(testid('key-image')).map((b) => b.getAttribute('class'))
  assert.ok(/\bactive\b/.test(active[1] ?? ''), `the turn's image is the bar's current one (${active})`)
  await browser.pause(300)
  await shot('4-turn-images')
})
