// What several real-window test files share: the driver session, screenshots, selectors, the new
// rater form and IPC calls as the page makes them. Each test file keeps only its own steps.

import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { remote } from 'webdriverio'

export const APP = process.env.NEURORATER_APP
export const DB = process.env.NEURORATER_DB
export const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), 'artifacts')
/** First start of a fresh database builds the demo study (minutes in a debug build). */
export const FIRST_START_TIMEOUT_MS = 240_000
export const LOAD_TIMEOUT_MS = 60_000

export const testid = (id) => `[data-testid="${id}"]`

/** A WebDriver session on the app scripts/e2e.sh built, started with `args` on its command line:
 * none opens this run's database (NEURORATER_DB), `['--db', path]` a database of the test's own. */
export async function openSession(args = []) {
  assert.ok(APP, 'NEURORATER_APP must name the app binary (scripts/e2e.sh sets it)')
  assert.ok(DB, 'NEURORATER_DB must name this run’s database (scripts/e2e.sh sets it)')
  mkdirSync(ARTIFACTS, { recursive: true })
  const options = {
    hostname: '127.0.0.1',
    port: Number(process.env.E2E_DRIVER_PORT ?? 4444),
    logLevel: 'warn',
    // No browserName: tauri-driver rejects sessions that set one.
    capabilities: { 'tauri:options': { application: APP, ...(args.length > 0 ? { args } : {}) } },
  }
  try {
    return await remote(options)
  } catch (error) {
    // Seen once in a whole-suite run (2026-11-26, rating.test.mjs's restart after SIGKILL): the
    // new app process panicked with "Failed to initialize GTK" (the X display refused it) and the
    // session timed out; the same test alone passed. One more attempt tells such a one-off from an
    // app that cannot start, which fails twice.
    console.warn(`openSession: no session (${error.message}); starting the app once more`)
    return remote(options)
  }
}

/** `shot(name)` saves the window as artifacts/<prefix>-<name>.png. */
export const screenshots = (browser, prefix) => (name) => browser.saveScreenshot(join(ARTIFACTS, `${prefix}-${name}.png`))

/** The name of the reader acting, as the top bar's reader control holds it (whole, however
 * much of a long name the bar has room to show), or null while nobody reads. */
export async function currentRater(browser) {
  return browser.execute(() => document.querySelector('[data-testid="current-rater"]')?.textContent ?? null)
}

/** Fills the start screen's new-rater form and waits until the app reads as them. */
export async function becomeNewRater(browser, name, role, years) {
  await browser.$(testid('new-rater')).waitForExist({ timeout: FIRST_START_TIMEOUT_MS, interval: 500 })
  // Each field is looked up from the page, not from the form element found first: the picker
  // may render its form again once the rater list arrives, which would leave that element stale.
  const field = (selector) => browser.$(`${testid('new-rater')} ${selector}`)
  // Under load the form can render again between two fields (a CI run once lost the role
  // select after the name was typed): the whole form is filled again until it holds the name.
  for (let attempt = 1; ; attempt++) {
    try {
      await field('input[name="name"]').setValue(name)
      await field('select[name="role"]').waitForExist({ timeout: LOAD_TIMEOUT_MS })
      await field('select[name="role"]').selectByAttribute('value', role)
      if (years !== undefined) await field('input[name="years"]').setValue(String(years))
      if ((await field('input[name="name"]').getValue()) === name) break
    } catch (error) {
      if (attempt >= 3) throw await withWhatTheWindowShows(browser, `new-rater-${name}`, error)
    }
    if (attempt >= 3) throw await withWhatTheWindowShows(browser, `new-rater-${name}`, new Error(`the new-rater form never kept ${name}`))
  }
  await field('button[type="submit"]').click()
  await browser.waitUntil(async () => (await currentRater(browser)) === name, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `${name} never became the current rater`,
  })
}

/** A failure that says what the window showed instead, with a screenshot: a CI run once lost the
 * new-rater form for good and left nothing to tell why. */
async function withWhatTheWindowShows(browser, shotName, error) {
  const file = join(ARTIFACTS, `failed-${shotName.replace(/[^A-Za-z0-9-]+/g, '_')}.png`)
  const shown = await browser
    .execute(() => document.querySelector('main')?.innerText ?? '(no main element)')
    .catch((e) => `(the page did not answer: ${e.message})`)
  await browser.saveScreenshot(file).catch(() => {})
  error.message += `\nThe window's main area showed: ${String(shown).replace(/\s+/g, ' ').slice(0, 600)}\nScreenshot: ${file}`
  return error
}

/** Opens the reader picker from the top bar's reader control ("NAME ▾"), as a clinician handing
 * the workstation over would. On the way it checks what the control promises: its accessible
 * name names the reader now acting, and the one-row top bar cuts nothing off at this window's
 * width (a long name gives way, not the buttons after it). One script reads all of it, so the
 * click follows at once (rating.test.mjs switches with an edit still queued). */
export async function switchReader(browser) {
  const control = await browser.$(testid('switch-reader'))
  await control.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  const seen = await browser.execute(readTopBar)
  assert.equal(seen.control, `Switch reader (now: ${seen.reader})`)
  assertFits(seen)
  await control.click()
  await browser.$(testid('rater-picker')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
}

/** The top bar shows every control in its one row: nothing overflows it. */
export async function assertTopBarFits(browser) {
  assertFits(await browser.execute(readTopBar))
}

/** Runs in the page: the top bar's size and the reader control's name. */
function readTopBar() {
  const bar = document.querySelector('header.topbar')
  return {
    scroll: bar.scrollWidth,
    client: bar.clientWidth,
    height: bar.getBoundingClientRect().height,
    reader: document.querySelector('[data-testid="current-rater"]')?.textContent ?? null,
    control: document.querySelector('[data-testid="switch-reader"]')?.getAttribute('aria-label') ?? null,
  }
}

function assertFits(bar) {
  assert.ok(bar.scroll <= bar.client, `the top bar is cut off: ${bar.scroll} px of content in ${bar.client} px`)
  assert.equal(Math.round(bar.height), 40, 'the top bar keeps its one row')
}

/** The save queue writes 250 ms after the last edit; a debug build's commit takes a little more. */
export const SAVE_TIMEOUT_MS = 15_000

/** Opens `assignment` from the reader's queue and waits until the reading screen shows it and
 * the element with test id `ready` (the part the caller reads next) is there. */
export async function openFromQueue(browser, assignment, ready) {
  // The queue is open already right after choosing a reader (its button is then "active", while
  // the list itself may still be loading): clicking the button again is a no-op that WebKit may
  // refuse while the screen is still laying out.
  const showQueue = await browser.$(testid('show-queue'))
  if (!((await showQueue.getAttribute('class')) ?? '').split(' ').includes('active')) {
    await showQueue.click()
  }
  const row = await browser.$(`[data-testid="queue-row"][data-assignment="${assignment}"] button`)
  await row.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  // Seen in whole-suite runs (rubric_versions.test.mjs, after 20 files): the row stayed "not
  // clickable" for a minute. The cause was the app's (a mode opened with the previous page's
  // scroll, the queue's first rows above the window; App.svelte now opens each mode at its top).
  // Should a row again not be clickable, the failure says what covers it, with a screenshot.
  const clickable = await row
    .waitForClickable({ timeout: LOAD_TIMEOUT_MS })
    .then(() => true)
    .catch(() => false)
  if (!clickable) {
    const onTop = await browser.execute((el) => {
      const box = el.getBoundingClientRect()
      const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2)
      return {
        box: [box.left, box.top, box.width, box.height].map(Math.round),
        viewport: [window.innerWidth, window.innerHeight],
        disabled: el.disabled,
        covered_by: top === el ? null : top ? `${top.tagName}.${top.className} ${top.getAttribute('data-testid') ?? ''}`.trim() : 'nothing (outside the viewport)',
      }
    }, row)
    await browser.saveScreenshot(join(ARTIFACTS, `queue-row-not-clickable-${assignment}.png`))
    assert.fail(`assignment ${assignment}'s button in the queue is not clickable: ${JSON.stringify(onTop)}`)
  }
  await row.click()
  const reading = await browser.$(testid('reading'))
  await browser.waitUntil(async () => (await reading.getAttribute('data-assignment')) === String(assignment), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `assignment ${assignment} never opened`,
  })
  await browser.$(testid(ready)).waitForExist({ timeout: LOAD_TIMEOUT_MS })
}

/** Waits until the screen says every change of `what` is saved. */
export async function waitSaved(browser, what) {
  const state = await browser.$(testid('save-state'))
  await browser.waitUntil(async () => (await state.getAttribute('data-state')) === 'saved', {
    timeout: SAVE_TIMEOUT_MS,
    timeoutMsg: `${what}: the screen never showed "saved" (it shows "${await state.getText()}")`,
  })
}

/** Leaves reading mode for the study's case list: where a file that reads must end, since the
 * next file's app starts where this one left (viewer.test.mjs waits for the case table). */
/** The study's case list (Cases), out of reading mode: the Reading start screen shows only the
 * reader picker, never the cases. `timeout` covers a first start that builds the demo study. */
export async function backToCaseList(browser, { timeout = LOAD_TIMEOUT_MS, atLeast = 1 } = {}) {
  const cases = browser.$(testid('mode-cases'))
  await cases.waitForClickable({ timeout, interval: 500 })
  await cases.click()
  const leave = await browser.$(testid('leave-reading'))
  if (await leave.isExisting()) await leave.click()
  await browser.waitUntil(async () => (await browser.$$('.case-row').length) >= atLeast, {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `the case list never showed ${atLeast} rows after reading`,
  })
}

/** A Tauri command through IPC, as the page would call it: `{ ok }` or `{ failure }` (a value with
 * an `error` key would read to the WebDriver client as a failed command). */
export function invoke(browser, command, args) {
  return browser.execute(
    async (c, a) => {
      try {
        return { ok: await window.__TAURI_INTERNALS__.invoke(c, a) }
      } catch (error) {
        return { failure: error }
      }
    },
    command,
    args,
  )
}

/** Sets a textarea at once, as a paste would (setValue types key by key). */
async function paste(browser, element, value) {
  await browser.execute(
    (el, v) => {
      el.value = v
      el.dispatchEvent(new Event('input', { bubbles: true }))
    },
    element,
    value,
  )
}

/** Pastes `text` into the "Add a spec" form of `textarea` and presses `add`. The form is folded
 * while the page lists specs (the demo's, from first start): it is unfolded by its summary, as the
 * lead would, after the paste (a page re-rendered by the paste may fold it again), and WebKit
 * lays out a folded form's content, so only the details' state tells whether it is open. */
export async function addSpec(browser, textarea, text, add) {
  await paste(browser, textarea, text)
  const unfolded = () => browser.execute((el) => el.closest('details').open, textarea)
  if (!(await unfolded())) {
    await browser.execute((el) => el.closest('details').querySelector('summary').scrollIntoView(), textarea)
    const summary = await browser.execute((el) => el.closest('details').querySelector('summary'), textarea)
    await (await browser.$(summary)).click()
  }
  assert.ok(await unfolded(), 'the form to add a spec did not open')
  const button = await browser.$(testid(add))
  await button.scrollIntoView({ block: 'center' })
  await button.click()
}
