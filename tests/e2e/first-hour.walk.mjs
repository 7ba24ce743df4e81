// The first hour of issue 19, walked in the real window on a fresh database with the demo: a
// neuroradiologist reads (queue, wheel and crosshair on the image, help sheet, a text label, scores
// by click and key, undo, a hint over the rubric, four viewports, Answer after Reading), then a
// curator (landing, an unsaved edit across cases, an own curation, a draft submitted), then an
// analyst's calibration view. It asserts little: it is a walk whose screenshots someone LOOKS at
// (tests/e2e/artifacts/walk-*.png), not a test the suite runs. The behaviours it passes are each
// tested in their own *.test.mjs.
// Run: E2E_DRIVER_PORT=4460 E2E_TESTS=first-hour.walk.mjs bash scripts/e2e.sh

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { LOAD_TIMEOUT_MS, becomeNewRater, openSession, screenshots, testid, switchReader } from './support.mjs'

let browser
let step = 0

before(async () => {
  browser = await openSession()
})

after(async () => {
  await browser?.deleteSession().catch(() => {})
})

const $ = (selector) => browser.$(selector)
/** Saves walk-NN-name.png, numbered in the order taken, after the screen has settled. */
async function shot(name) {
  await browser.pause(400)
  step++
  await screenshots(browser, 'walk')(`${String(step).padStart(2, '0')}-${name}`)
}

async function viewportsReady() {
  await browser.waitUntil(
    async () => {
      const states = await browser.$$(testid('viewport')).map((el) => el.getAttribute('data-state'))
      return states.length > 0 && states.every((s) => s === 'ready')
    },
    { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the viewer never became ready' },
  )
}

const sliceLabel = () => $(testid('slice-position')).getText()

test('a neuroradiologist reads their first responses', async () => {
  await $(testid('new-rater')).waitForExist({ timeout: 240_000, interval: 500 })
  await shot('start')
  await becomeNewRater(browser, 'Dr Nina Neuro', 'neuroradiologist', 15)
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await shot('queue')
  await $(testid('continue')).click()
  await $(testid('rationale')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await viewportsReady()
  await shot('response-1')

  const canvas = await $(`${testid('viewport')} canvas`)
  const before = await sliceLabel()
  for (let i = 0; i < 3; i++) await browser.action('wheel').scroll({ origin: canvas, x: 0, y: 0, deltaY: 120 }).perform()
  await browser.pause(300)
  console.log(`wheel ×3: ${before} → ${await sliceLabel()}`)
  await shot('wheel-down-3')
  await browser.action('pointer').move({ origin: canvas, x: -60, y: -40 }).down().up().perform()
  await shot('crosshair-click')
  // A click on the side panel gives the keys back to the rubric.
  await $(testid('case-code')).click()

  await browser.keys('?')
  await $(testid('cheat-sheet')).waitForDisplayed({ timeout: 5_000 })
  await shot('help-sheet')
  await browser.keys('Escape')

  await browser.execute(() => {
    const el = document.querySelector('[data-testid="rationale"]')
    const node = [...el.childNodes].find((n) => n.nodeType === Node.TEXT_NODE && n.length > 40)
    const range = document.createRange()
    range.setStart(node, 12)
    range.setEnd(node, 30)
    window.getSelection().removeAllRanges()
    window.getSelection().addRange(range)
    el.dispatchEvent(new MouseEvent('mouseup', { bubbles: true }))
  })
  await browser.keys('e')
  await $(testid('label-editor')).waitForDisplayed({ timeout: 5_000 })
  await browser.keys(['r', '1'])
  await browser.keys('Enter')
  await browser.keys('2')
  await shot('label-box')
  await $(testid('label-comment')).setValue('does not follow')
  await browser.keys('Enter')
  await $(testid('label-editor')).waitForExist({ reverse: true, timeout: 5_000 })
  await shot('label-saved')

  const rows = await browser.$$(testid('rubric-row'))
  await rows[0].scrollIntoView({ block: 'center' })
  await rows[0].$('button.level').click()
  await browser.execute(() => document.activeElement?.blur?.())
  await browser.keys('3')
  await shot('click-then-key')
  await browser.keys(['Control', 'z'])
  await $(testid('undo-note')).waitForDisplayed({ timeout: 5_000 })
  console.log(`undo says: ${await $(testid('undo-note')).getText()}`)
  await shot('undo')
  const hinted = await rows.at(-2).$('button.has-tip')
  await hinted.moveTo()
  await shot('rubric-hint')
  await $(testid('rating-comment')).moveTo()
  await shot('rubric-hint-gone')

  const layout4 = await browser.$$('.toolbar button').find(async (b) => (await b.getText()) === '4')
  await layout4.click()
  await browser.waitUntil(async () => (await browser.$$(testid('viewport')).length) === 4, { timeout: LOAD_TIMEOUT_MS })
  await viewportsReady()
  await shot('four-viewports')

  await $(testid('show-queue')).click()
  await shot('queue-after-one')
  await $(testid('mode-baseline')).click()
  await browser.waitUntil(async () => (await browser.$$(testid('baseline-task')).length) > 0, { timeout: LOAD_TIMEOUT_MS })
  await shot('answer-after-reading')
})

test('a curator curates', async () => {
  await switchReader(browser)
  await becomeNewRater(browser, 'Dr Carl Curator', 'curator')
  await $(testid('gt-diagnosis')).waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the curator did not land on Curation' })
  await viewportsReady()
  await shot('curator-lands')
  await $(testid('gt-code')).setValue('G35.0')
  await shot('unsaved-edit')
  const cases = await browser.$$(testid('curation-case'))
  await cases[1].click()
  await browser.waitUntil(async () => (await $(testid('gt-heading')).getAttribute('data-case')) === (await cases[1].getAttribute('data-case')), {
    timeout: LOAD_TIMEOUT_MS,
  })
  await shot('other-case')
  await cases[0].click()
  await browser.waitUntil(async () => (await $(testid('gt-code')).getValue()) === 'G35.0', { timeout: LOAD_TIMEOUT_MS })
  await shot('back-with-edit')
  const differential = await $(testid('gt-differential'))
  await differential.scrollIntoView({ block: 'center' })
  await shot('differential')

  await $(testid('gt-save')).click()
  await browser.waitUntil(async () => (await $(testid('curation-status')).getAttribute('data-status')) === 'draft', { timeout: LOAD_TIMEOUT_MS })
  await shot('draft-saved')
  await $(testid('gt-submit')).click()
  await browser.waitUntil(async () => (await $(testid('curation-status')).getAttribute('data-status')) === 'in_review', {
    timeout: LOAD_TIMEOUT_MS,
  })
  await browser.execute(() => document.querySelector('[data-testid="curation-form"]').scrollTo({ top: 0 }))
  await shot('submitted-own-review')

  const branch = await $(testid('gt-branch'))
  await branch.selectByAttribute('value', 'dr-carl-curator')
  await $(testid('gt-branch-hint')).waitForDisplayed({ timeout: 5_000 })
  await $(testid('gt-diagnosis')).setValue('Relapsing-remitting multiple sclerosis (own)')
  await $(testid('gt-save')).click()
  await $(testid('gt-branch-status')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await browser.waitUntil(async () => /draft/i.test(await $(testid('gt-branch-status')).getText()), { timeout: LOAD_TIMEOUT_MS })
  await browser.execute(() => document.querySelector('[data-testid="curation-form"]').scrollTo({ top: 0 }))
  await shot('own-curation-saved')
})

test('an analyst opens the calibration', async () => {
  await $(testid('mode-calibration')).click()
  await $(testid('calibration-view')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await browser.waitUntil(async () => (await $(testid('verdict')).isExisting()) || (await $('.calibration .error-notice').isExisting()), {
    timeout: 120_000,
  })
  await shot('calibration')
  await $(testid('mode-cases')).click()
  await $('.case-row').waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await shot('cases')
  assert.ok(step > 20)
})
