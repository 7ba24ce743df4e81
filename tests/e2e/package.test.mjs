// Multi-site reading in the real window: a study lead builds a rater package with the CLI; the
// remote rater's app (its own fresh database, which first start fills with the demo study)
// imports it, the new study appears in the study picker, the rater reads and comments one
// response, exports a results package, and the lead merges it in their own app (the CLI's
// `neurorater package merge` then finds nothing new); then the lead builds a second package for
// the same rater in the app, which another site's CLI imports.
// The native open and save dialogs cannot be driven, so the commands are invoked with the path
// a dialog would return; the menu itself is checked to be there. Run through scripts/e2e.sh.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { LOAD_TIMEOUT_MS, openSession, screenshots, testid } from './support.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const TARGET = process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target')
const CLI = join(TARGET, 'debug', 'neurorater')
// First start writes and imports the demo study; a debug build on 2 shared cores is slow.
const FIRST_START_TIMEOUT_MS = 300_000
const SAVE_TIMEOUT_MS = 15_000
// The lead's study must not be the demo the remote app seeds itself with: a rater package is
// refused by a database that already holds its study.
const STUDY = { id: 'site-a-study', title: 'Site A reading study (synthetic)' }
const RATER = 'Dr Remote Reader'
const COMMENT = 'Read at site B in the e2e test.'

let browser
let work
let leadDb
let raterPackage
let exported

const cli = (...args) => execFileSync(CLI, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
const cliJson = (...args) => JSON.parse(cli(...args, '--json'))
const $ = (selector) => browser.$(selector)
const shot = (name) => screenshots(browser, 'package')(name)
const invoke = (command, args) =>
  browser.execute(
    (command, args) =>
      // Not `{error}`: WebDriver clients read a returned `error` key as a failed command.
      window.__TAURI_INTERNALS__.invoke(command, args).then(
        (value) => ({ value }),
        (refusal) => ({ refusal }),
      ),
    command,
    args,
  )

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'neurorater-package-e2e-'))
  // scripts/e2e.sh builds the CLI beside the app, with the app's features: building it alone here
  // would rebuild its dependencies with another feature set.
  assert.ok(existsSync(CLI), `build the CLI beside the app first (scripts/e2e.sh does): no ${CLI}`)

  // Site A, the lead: a study of their own (the demo bundle under another id), a remote rater
  // with a queue, and that rater's package.
  const bundle = join(work, 'bundle')
  cli('demo', '--out', bundle)
  const studyFile = join(bundle, 'study.json')
  const study = JSON.parse(readFileSync(studyFile, 'utf8'))
  study.study.id = STUDY.id
  study.study.title = STUDY.title
  writeFileSync(studyFile, JSON.stringify(study, null, 2))
  leadDb = join(work, 'lead', 'lead.sqlite')
  mkdirSync(dirname(leadDb))
  cli('import', bundle, '--db', leadDb)
  cli('rater', 'add', 'Dr Lead', '--role', 'curator', '--db', leadDb)
  cli('rater', 'add', RATER, '--role', 'neurologist', '--db', leadDb)
  cli('assign', '--db', leadDb, '--study', STUDY.id, '--name', 'site-b', '--seed', '7', '--lead', 'Dr Lead',
    '--rater', RATER, '--per-rater', '4')
  raterPackage = join(work, 'dr-remote.nrpkg.tar')
  exported = cliJson('package', 'export-rater', '--db', leadDb, '--study', STUDY.id, '--rater', RATER,
    '--site', 'Site B', '--out', raterPackage)
  assert.equal(exported.items, 4)

  // Site B: the rater's app on a database of its own.
  const remoteDb = join(work, 'site-b', 'remote.sqlite')
  mkdirSync(dirname(remoteDb))
  browser = await openSession(['--db', remoteDb])
})

after(async () => {
  await browser?.deleteSession().catch(() => {})
  if (work) rmSync(work, { recursive: true, force: true })
})

test('the rater imports the package and its study appears beside the demo', async () => {
  const menu = await $(testid('package-menu'))
  await menu.waitForExist({ timeout: FIRST_START_TIMEOUT_MS, interval: 500, timeoutMsg: 'the package menu never appeared' })
  await menu.$('summary').click()
  assert.ok(await $(testid('package-import')).isDisplayed(), '"Import a package…" is in the menu')
  assert.ok(await $(testid('package-export')).isDisplayed(), '"Export my results…" is in the menu')
  await shot('1-menu')
  await menu.$('summary').click()

  const refused = await invoke('import_rater_package', { path: 'dr-remote.nrpkg.tar' })
  assert.equal(refused.refusal?.code, 'invalid_argument', JSON.stringify(refused))

  const imported = await invoke('import_rater_package', { path: raterPackage })
  assert.deepEqual(imported.value, {
    package_id: exported.package_id,
    study_id: STUDY.id,
    rater: RATER,
    site: 'Site B',
    items: 4,
    already_imported: false,
    top_up: false,
  })
  // The page learns of the import as the menu's handler would: reload, and the picker lists it.
  await browser.execute(() => window.location.reload())
  const picker = await $(testid('study-picker'))
  await picker.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'no study picker after the import' })
  const options = await picker.$$('option').map((o) => o.getAttribute('value'))
  assert.deepEqual([...options].sort(), [STUDY.id, 'neurorater-demo'].sort())
  await picker.selectByAttribute('value', STUDY.id)
  await browser.waitUntil(async () => (await $(testid('start-study')).getText()).includes(STUDY.title), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: 'the study picker did not switch to the package’s study',
  })
})

test('the rater reads one response of the package and it is saved', async () => {
  const choice = await $(`//button[contains(@class, "rater-choice")][.//span[text()="${RATER}"]]`)
  await choice.waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: `${RATER} is not offered in the rater picker` })
  await shot('2-study-picked')
  await choice.click()
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  const rows = await browser.$$(testid('queue-row')).length
  assert.equal(rows, 4, 'the queue is the package’s four items')
  await $(testid('continue')).click()
  await $(testid('rationale')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  // Blinded: nothing on the screen names a model or a grader.
  assert.doesNotMatch(await $('body').getText(), /grader|model-[a-z]|gpt|gemini|claude/i)
  await $(testid('rating-comment')).setValue(COMMENT)
  await browser.waitUntil(async () => (await $(testid('save-state')).getAttribute('data-state')) === 'saved', {
    timeout: SAVE_TIMEOUT_MS,
    timeoutMsg: 'the comment was never shown as saved',
  })
  await browser.pause(500) // let the viewer draw for the screenshot
  await shot('3-rated')
})

test('the lead merges the exported results in the app, and the CLI finds nothing new', async () => {
  const results = join(work, 'site-b', 'results.tar')
  // An id outside the rule is turned away by the command's types before the command runs, in
  // the rule's words, and nothing is written.
  const outside = await invoke('export_results_package', { path: results, packageId: '../other' })
  assert.match(
    String(outside.refusal),
    /^invalid args `packageId` for command `export_results_package`: must be 1–64 characters/,
    JSON.stringify(outside),
  )
  assert.ok(!existsSync(results))
  const written = await invoke('export_results_package', { path: results, package: null })
  assert.equal(written.value, results, JSON.stringify(written))
  assert.ok(existsSync(results))

  // Site A: the lead's app on the lead's database, nobody reading.
  await browser.deleteSession()
  browser = await openSession(['--db', leadDb])
  // Settled once it asks who is reading (the lead's raters, nobody chosen yet).
  await $('.rater-choice').waitForExist({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the lead’s app never asked who is reading' })
  const menu = await $(testid('package-menu'))
  await menu.$('summary').click()
  assert.ok(await $(testid('package-merge')).isDisplayed(), '"Merge a site’s results…" is in the lead’s menu')
  await shot('4-lead-menu')
  await menu.$('summary').click()

  const merged = await invoke('merge_results_package', { path: results })
  assert.equal(merged.value?.rater, RATER, JSON.stringify(merged))
  assert.equal(merged.value.site, 'Site B')
  assert.ok(merged.value.added >= 1, `the merge added the rating: ${JSON.stringify(merged)}`)
  assert.deepEqual(merged.value.conflicts, [])

  const again = cliJson('package', 'merge', '--db', leadDb, results)
  assert.equal(again.package_id, merged.value.package_id)
  assert.deepEqual([again.added, again.updated, again.unchanged, again.conflicts], [0, 0, merged.value.added, []])

  // A rater reading blinded at the lead's workstation may not merge: the menu hides it and the
  // backend refuses it.
  const raters = await invoke('list_raters', {})
  const reader = raters.value.find((r) => r.name === RATER)
  assert.ok(reader, JSON.stringify(raters))
  await invoke('set_current_rater', { raterId: reader.id })
  const refused = await invoke('merge_results_package', { path: results })
  assert.equal(refused.refusal?.code, 'refused', JSON.stringify(refused))
  assert.match(refused.refusal.message, /study lead's/)
  await browser.execute(() => window.location.reload())
  await $(testid('package-menu')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await $(testid('package-menu')).$('summary').click()
  assert.ok(await $(testid('package-import')).isDisplayed())
  assert.equal(await $(testid('package-merge')).isExisting(), false, 'the merge is not offered to a blinded reader')
  await invoke('leave_reading', {})
})

test('the lead builds a rater package in the app, as the CLI does, and a blinded reader may not', async () => {
  await browser.execute(() => window.location.reload())
  const menu = await $(testid('package-menu'))
  await menu.waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await menu.$('summary').click()
  const form = await $(testid('package-build-form'))
  await form.waitForDisplayed({ timeout: LOAD_TIMEOUT_MS, timeoutMsg: 'the lead’s menu offers no "Build a rater package"' })
  const offered = await form.$$('select[name="rater"] option').map((o) => o.getText())
  assert.ok(offered.includes(RATER), `the remote rater is offered: ${offered}`)
  assert.ok(!offered.includes('Dr Lead'), `a curator reads nothing blinded and is not offered: ${offered}`)
  await form.$('select[name="rater"]').selectByVisibleText(RATER)
  await form.$('input[name="site"]').setValue('Site C')
  await shot('5-lead-build')
  await menu.$('summary').click()

  // The save dialog cannot be driven: the command gets the path it would return.
  const raters = await invoke('list_raters', {})
  const reader = raters.value.find((r) => r.name === RATER)
  const second = join(work, 'dr-remote-site-c.nrpkg.tar')
  const relative = await invoke('export_rater_package', { studyId: STUDY.id, raterId: reader.id, site: 'Site C', path: 'x.tar' })
  assert.equal(relative.refusal?.code, 'invalid_argument', JSON.stringify(relative))
  const built = await invoke('export_rater_package', { studyId: STUDY.id, raterId: reader.id, site: 'Site C', path: second })
  assert.ok(built.value, JSON.stringify(built))
  assert.equal(built.value.rater, RATER)
  assert.equal(built.value.site, 'Site C')
  assert.equal(built.value.items, exported.items, 'the rater’s whole queue, as the CLI’s package held')
  assert.equal(built.value.path, second)
  assert.notEqual(built.value.package_id, exported.package_id)
  const recorded = JSON.parse(
    execFileSync('sqlite3', ['-json', leadDb, `SELECT site FROM rater_packages WHERE package_id = '${built.value.package_id}'`]).toString(),
  )
  assert.deepEqual(recorded, [{ site: 'Site C' }], 'recorded in the lead’s database, so its results merge')
  // The package reads at the other site as the CLI's does.
  const elsewhere = join(work, 'site-c', 'remote.sqlite')
  mkdirSync(dirname(elsewhere))
  const imported = cliJson('package', 'import', '--db', elsewhere, second)
  assert.equal(imported.package_id, built.value.package_id)
  assert.equal(imported.items, exported.items)

  // A rater reading blinded here may not build another's package: the menu hides it and the
  // backend refuses it, writing nothing.
  await invoke('set_current_rater', { raterId: reader.id })
  const third = join(work, 'refused.nrpkg.tar')
  const refused = await invoke('export_rater_package', { studyId: STUDY.id, raterId: reader.id, site: 'Site C', path: third })
  assert.equal(refused.refusal?.code, 'refused', JSON.stringify(refused))
  assert.ok(!existsSync(third))
  await browser.execute(() => window.location.reload())
  await $(testid('package-menu')).waitForExist({ timeout: LOAD_TIMEOUT_MS })
  await $(testid('package-menu')).$('summary').click()
  assert.equal(await $(testid('package-build-form')).isExisting(), false, 'the build is not offered to a blinded reader')
  await invoke('leave_reading', {})
})
