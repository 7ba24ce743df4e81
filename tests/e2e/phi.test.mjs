// PHI in the real window: a study whose DICOM slices carry a marker in every PS3.15 basic-profile
// attribute that a text, date, time or UID value can fill (tests/src/phi.rs, written by the
// `phi_bundle` example) is imported with the CLI into a database of its own, and a whole session
// is worked through in the window on it: a rater reads and scores a response beside its images,
// then the case list, the case with its viewer, the calibration report, the curation view and the
// report's exports. Every IPC call's arguments and answer (the viewer's pixel bytes included), the
// page's markup on every screen, the app's log, the database with its WAL and every export are
// searched for every marker. Run through scripts/e2e.sh (display, driver, E2E_DRIVER_LOG).

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openSession, screenshots, testid } from './support.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const TARGET = process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target')
const CLI = join(TARGET, 'debug', 'neurorater')
const PHI_BUNDLE = join(TARGET, 'debug', 'examples', 'phi_bundle')
const LOAD_TIMEOUT_MS = 120_000
const SAVE_TIMEOUT_MS = 15_000
const RATER = 'Dr Phi Reader'

let browser
let work
let db
let markers
let bundle
/** Everything the window showed or sent, by where it was seen. */
const seen = []

const $ = (selector) => browser.$(selector)
const shot = (name) => screenshots(browser, 'phi')(name)
const cli = (...args) => execFileSync(CLI, args, { encoding: 'utf8' })

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'neurorater-phi-e2e-'))
  db = join(work, 'phi.sqlite')
  for (const built of [CLI, PHI_BUNDLE]) {
    assert.ok(existsSync(built), `scripts/e2e.sh builds the CLI and the PHI bundle writer beside the app: no ${built}`)
  }
  ;({ bundle, markers } = JSON.parse(execFileSync(PHI_BUNDLE, [join(work, 'bundle')], { encoding: 'utf8' })))
  assert.ok(markers.length > 60, `only ${markers.length} markers planted`)
  // The control: the files the app is given do carry the markers.
  const slice = readFileSync(join(bundle, 'cases/ms-01/flair/a.dcm'))
  assert.ok(slice.includes('ZZPHI'), 'the planted slice carries its markers')
  cli('import', bundle, '--db', db)
  // Two clinicians' earlier ratings, so the calibration report has something to report.
  const ratings = join(work, 'ratings.csv')
  const items = ['ms-01/dx/vlm-a/0', 'ms-01/dx/vlm-a/1', 'ms-01/dx/vlm-b/0', 'ms-01/lesions/vlm-b/0']
  const rows = items.flatMap((item, i) => [`${item},dr-one,${1 + i}`, `${item},dr-two,${5 - i}`])
  writeFileSync(ratings, ['item,rater,score', ...rows].join('\n') + '\n')
  cli('import-ratings', ratings, '--db', db)
  // Its own database: this run's shared one holds the demo study.
  browser = await openSession(['--db', db])
})

after(async () => {
  await browser?.deleteSession().catch(() => {})
  if (work) rmSync(work, { recursive: true, force: true })
})

/**
 * Records every IPC call from here on. Tauri's `invoke` cannot be replaced (its property is
 * read-only), but every call goes through `window.fetch` to the `ipc:` protocol, so the recorder
 * wraps fetch and keeps the request body and the answer's bytes, as the webview received them.
 */
async function recordIpc() {
  const how = await browser.execute(() => {
    if (window.__phiIpc) return 'already'
    window.__phiIpc = []
    const asText = (bytes) => {
      let text = ''
      for (let i = 0; i < bytes.length; i += 8192) text += String.fromCharCode(...bytes.subarray(i, i + 8192))
      return text
    }
    const originalFetch = window.fetch.bind(window)
    window.fetch = async (input, init) => {
      const url = typeof input === 'string' ? input : input.url
      if (!url.startsWith('ipc:') && !url.includes('ipc.localhost')) return originalFetch(input, init)
      const entry = { url, body: typeof init?.body === 'string' ? init.body : init?.body ? asText(new Uint8Array(init.body.buffer ?? init.body)) : '' }
      window.__phiIpc.push(entry)
      const response = await originalFetch(input, init)
      entry.status = response.status
      entry.answer = asText(new Uint8Array(await response.clone().arrayBuffer()))
      return response
    }
    return 'fetch'
  })
  return how
}

/** Takes what the recorder holds (and empties it), plus the page's markup. */
async function collect(where) {
  const { calls, html } = await browser.execute(() => {
    const calls = window.__phiIpc ?? []
    window.__phiIpc = []
    return { calls, html: document.documentElement.outerHTML }
  })
  for (const call of calls) {
    seen.push({ where: `${where}: IPC ${call.url} arguments`, text: call.body })
    seen.push({ where: `${where}: IPC ${call.url} answer`, text: call.answer ?? '' })
  }
  seen.push({ where: `${where}: page markup`, text: html })
  return calls
}

/** A test whose failure leaves a screenshot of the screen it failed on. */
const windowTest = (name, body) =>
  test(name, async () => {
    try {
      await body()
    } catch (error) {
      await shot(`failed-${name.slice(0, 24).replace(/\W+/g, '-')}`).catch(() => {})
      throw error
    }
  })

async function waitSaved(what) {
  await browser.waitUntil(async () => (await $(testid('save-state')).getAttribute('data-state')) === 'saved', {
    timeout: SAVE_TIMEOUT_MS,
    timeoutMsg: `${what}: the screen never showed "saved"`,
  })
}

windowTest('a rater reads and scores a response of the identified study beside its images', async () => {
  await recordIpc()
  const form = await $(testid('new-rater'))
  await form.waitForExist({ timeout: LOAD_TIMEOUT_MS, interval: 500 })
  await form.$('input[name="name"]').setValue(RATER)
  await form.$('select[name="role"]').selectByAttribute('value', 'neuroradiologist')
  await form.$('input[name="years"]').setValue('9')
  await form.$('button[type="submit"]').click()
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await collect('new rater')

  // The study lead assigns the study from the CLI while the app is open on the same database.
  cli('assign', '--db', db, '--study', 'pilot', '--name', 'phi-check', '--seed', '3', '--lead', RATER, '--rater', RATER)
  await browser.refresh()
  await recordIpc()
  // Every start asks who is reading; the last reader is offered first.
  await $(testid('continue-as')).waitForClickable({ timeout: LOAD_TIMEOUT_MS })
  await $(testid('continue-as')).click()
  await $(testid('continue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await $(testid('continue')).click()
  await $(testid('rationale')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await browser.waitUntil(async () => (await browser.$$(testid('viewport')).length) > 0, { timeout: LOAD_TIMEOUT_MS })
  await browser.pause(1000) // the viewer's first draw, for the screenshot
  await $(testid('rating-comment')).setValue('Lesion burden as described; no other finding.')
  await waitSaved('the comment')
  await shot('1-reading')
  const calls = await collect('reading')
  const commands = calls.map((c) => c.url)
  assert.ok(
    commands.some((url) => url.includes('series_volume')),
    `the viewer's pixels went through the recorder (calls: ${commands.join(', ')})`,
  )
  assert.ok(commands.some((url) => url.includes('reading_item')), 'the reading item went through the recorder')
})

windowTest('the case list, the case view, calibration and curation of the identified study', async () => {
  // A reader leaves reading mode (audited) before the unblinded views open.
  await $(testid('mode-calibration')).click()
  await $(testid('leave-reading')).waitForClickable({ timeout: LOAD_TIMEOUT_MS })
  await $(testid('leave-reading')).click()
  await $(testid('mode-cases')).waitForClickable({ timeout: LOAD_TIMEOUT_MS })
  await $(testid('mode-cases')).click()
  const open = await $('.case-row button.link')
  await open.waitForClickable({ timeout: LOAD_TIMEOUT_MS })
  await open.click()
  await browser.waitUntil(async () => (await browser.$$(testid('viewport')).length) > 0, { timeout: LOAD_TIMEOUT_MS })
  await browser.pause(1000)
  await shot('2-case')
  await collect('case view')

  await $(testid('mode-calibration')).click()
  await $(testid('calibration-view')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  // The report is built in the background (bootstrap with progress); export opens once it is.
  await browser.waitUntil(
    () =>
      browser.execute(() =>
        [...document.querySelectorAll('button')].some((b) => b.textContent.trim() === 'JSON' && !b.disabled),
      ),
    { timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the calibration report never finished' },
  )
  await shot('3-calibration')
  await collect('calibration')

  await $(testid('mode-curation')).click()
  await $(testid('curation-form')).waitForExist({ timeout: LOAD_TIMEOUT_MS }).catch(() => {})
  await browser.pause(1000)
  await shot('4-curation')
  await collect('curation')

  const exported = []
  for (const format of ['json', 'html', 'csv']) {
    const path = join(work, `report.${format}`)
    const written = await browser.execute(
      (format, path) => window.__TAURI_INTERNALS__.invoke('export_calibration_report', { format, path }),
      format,
      path,
    )
    exported.push(...written)
  }
  await collect('exports')
  for (const path of exported) seen.push({ where: `export ${path}`, text: readFileSync(path, 'latin1') })
  assert.ok(exported.length >= 3, `the report was exported (${exported.join(', ')})`)
})

test('no marker is in any IPC payload, page, log, database file or export', async () => {
  await browser.deleteSession()
  browser = null
  for (const name of readdirSync(work)) {
    if (name.startsWith('phi.sqlite')) seen.push({ where: `database file ${name}`, text: readFileSync(join(work, name), 'latin1') })
  }
  const log = process.env.E2E_DRIVER_LOG
  if (log && existsSync(log)) seen.push({ where: 'the app and driver log', text: readFileSync(log, 'latin1') })
  assert.ok(seen.some((s) => s.where.includes('series_volume')), 'the pixels are among what is searched')
  assert.ok(seen.some((s) => s.where.startsWith('database file phi.sqlite')), 'the database is among what is searched')
  const leaks = []
  for (const { where, text } of seen) {
    for (const marker of markers) if (text.includes(marker)) leaks.push(`${marker} in ${where}`)
  }
  assert.deepEqual(leaks, [], `identifiers leaked:\n${leaks.slice(0, 20).join('\n')}`)
})
