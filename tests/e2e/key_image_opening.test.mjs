// Issue 41 finding 8b in the real window: a response opened on FLAIR slice 17 (the case's first
// series, its middle slice) while its task's key image was T1 slice 19. Here a new reader opens a
// response of their queue whose task's first key image lies on another series than the case's
// first, and the viewer opens on that series at that slice, badged "Key image 1". Run through
// scripts/e2e.sh.

import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { DB, LOAD_TIMEOUT_MS, backToCaseList, becomeNewRater, openFromQueue, openSession, screenshots, switchReader, testid } from './support.mjs'

const READER = 'Dr Kim Keyimage'

let browser
const $ = (selector) => browser.$(selector)
const shot = (name) => screenshots(browser, 'key_image_opening')(name)
const rows = (query) => JSON.parse(execFileSync('sqlite3', ['-json', DB, query]).toString().trim() || '[]')

before(async () => {
  browser = await openSession()
})

after(async () => {
  if (browser) await backToCaseList(browser).catch(() => {})
  await browser?.deleteSession().catch(() => {})
})

test('a response opens on its task’s key image, not on the case’s first series', async () => {
  // The picker shows at start; a file run after others may find a reader acting already.
  await browser.waitUntil(
    async () => (await $(testid('new-rater')).isExisting()) || (await $(testid('switch-reader')).isExisting()),
    { timeout: 240_000, interval: 500, timeoutMsg: 'the window never got ready' },
  )
  if (!(await $(testid('new-rater')).isExisting())) await switchReader(browser)
  await becomeNewRater(browser, READER, 'neuroradiologist', 8)
  await $(testid('reading-queue')).waitForExist({ timeout: LOAD_TIMEOUT_MS })

  const [item] = rows(
    `SELECT a.id AS assignment, json_extract(t.key_images_json, '$[0].series') AS series,
            json_extract(t.key_images_json, '$[0].slice') AS slice,
            (SELECT s.series_id FROM series s WHERE s.case_ref = t.case_ref ORDER BY s.id LIMIT 1) AS first
       FROM assignments a JOIN raters r ON a.rater = r.id JOIN responses p ON a.response = p.id
       JOIN tasks t ON p.task = t.id
      WHERE r.name = '${READER}' AND json_array_length(t.key_images_json) > 0
        AND json_extract(t.key_images_json, '$[0].series')
            <> (SELECT s.series_id FROM series s WHERE s.case_ref = t.case_ref ORDER BY s.id LIMIT 1)
      ORDER BY a.position LIMIT 1`,
  )
  assert.ok(item, 'the queue holds a response whose key image is not on the case’s first series')

  await openFromQueue(browser, item.assignment, 'viewport')
  const viewport = await $(testid('viewport'))
  await browser.waitUntil(async () => (await $(`${testid('viewport')} ${testid('key-badge')}`).isExisting()), {
    timeout: LOAD_TIMEOUT_MS,
    timeoutMsg: `the viewer did not open on key image 1 (${item.series} slice ${item.slice}); it shows ${await viewport.getAttribute('data-series')}`,
  })
  assert.equal(await viewport.getAttribute('data-series'), item.series, 'the key image’s series, not the case’s first')
  assert.notEqual(item.series, item.first)
  assert.equal(await $(`${testid('viewport')} ${testid('key-badge')}`).getText(), 'Key image 1')
  // The badge is shown only where the native slice is the key image's (Viewport's overlay).
  await shot('1-opens-on-key-image')
})
