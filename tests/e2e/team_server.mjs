// The team server for a real-window test: a PostgreSQL cluster of the test's own (initdb and
// pg_ctl in a temporary folder on a free loopback port, as the postgres user when run as root,
// as scripts/lib/postgres.sh does), the demo study copied onto it with the CLI
// (`neurorater server-import`), `neurorater serve` as a child process, HTTP calls as a lead or a
// rater make them, and a TCP relay the test controls between the app and the server.

import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer, connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

const PG_BIN =
  process.env.NEURORATER_PG_BIN ??
  (() => {
    const versions = (() => {
      try {
        return readdirSync('/usr/lib/postgresql')
      } catch {
        return []
      }
    })()
    const newest = versions.map(Number).filter(Number.isFinite).sort((a, b) => a - b).pop()
    assert.ok(newest, "PostgreSQL's programs are missing: bash scripts/setup.sh --with-test-tools")
    return `/usr/lib/postgresql/${newest}/bin`
  })()
const AS_ROOT = process.getuid?.() === 0

/** A loopback port nobody listens on now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}

const asOwner = (command) =>
  AS_ROOT ? execFileSync('su', ['postgres', '-c', command], { stdio: 'pipe' }) : execFileSync('sh', ['-c', command], { stdio: 'pipe' })

/** The cluster: `psql(sql)` answers rows as text (`|` between fields), `stop()` ends it. */
export async function startCluster() {
  const dir = mkdtempSync(join(tmpdir(), 'neurorater-e2e-pg-'))
  if (AS_ROOT) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
    chownSync(dir, uid, gid)
  }
  const port = await freePort()
  asOwner(`${PG_BIN}/initdb -D ${dir}/data -A trust -U postgres --no-sync -E UTF8 >/dev/null`)
  asOwner(`${PG_BIN}/pg_ctl -D ${dir}/data -o '-p ${port} -k ${dir} -c listen_addresses=127.0.0.1' -l ${dir}/log -w start >/dev/null`)
  const psql = (sql, database = 'neurorater') =>
    execFileSync(`${PG_BIN}/psql`, ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-X', '-A', '-t', '-q', '-d', database, '-v', 'ON_ERROR_STOP=1', '-c', sql], {
      encoding: 'utf8',
    }).trim()
  psql('CREATE DATABASE neurorater', 'postgres')
  return {
    url: `postgres://postgres@127.0.0.1:${port}/neurorater`,
    psql,
    stop() {
      try {
        asOwner(`${PG_BIN}/pg_ctl -D ${dir}/data -m immediate stop >/dev/null 2>&1`)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}

/** `neurorater serve` on `database`: `base` its URL, `stop()`, `log()` (stderr: one line per request). */
export async function startServer(cli, database) {
  const child = spawn(cli, ['serve', '--database', database, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  child.stderr.on('data', (chunk) => (log += chunk))
  const first = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`the server exited (${code}): ${log}`)))
  })
  const base = first.trim().replace(/^listening on /, '')
  assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/, `the server's first line: ${first}`)
  return { base, log: () => log, stop: () => child.kill('SIGTERM') }
}

/** An HTTP call that must succeed; its JSON (null when empty). */
export async function api(base, method, path, token, body) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await response.text()
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`)
  return text ? JSON.parse(text) : null
}

/** Accepts an invitation `code` with `password` and logs in: the session's token. */
export async function acceptAndLogin(base, username, code, password) {
  await api(base, 'POST', '/api/invitations/accept', null, { code, password })
  return (await api(base, 'POST', '/api/login', null, { username, password })).token
}

/** The demo study in a local database under `work`, copied onto the cluster with "lead" invited:
 * the study id and the lead's one-time code. */
export function demoOnServer(cli, work, database) {
  const run = (...args) => execFileSync(cli, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  run('demo', '--out', join(work, 'demo'))
  run('import', join(work, 'demo'), '--db', join(work, 'study.sqlite'))
  const study = JSON.parse(readFileSync(join(work, 'demo', 'study.json'), 'utf8')).study.id
  const report = JSON.parse(
    run('server-import', '--database', database, '--db', join(work, 'study.sqlite'), '--study', study, '--lead', 'lead', '--lead-site', 'Hospital A'),
  )
  return { study, leadCode: report.lead_invitation.code }
}

/** A TCP relay on a free loopback port to `target` (`host:port`). While blocked it refuses
 * connections (closes them at once) and cuts the open ones, as a lost network does. */
export async function startRelay(target) {
  const [host, port] = target.split(':')
  const open = new Set()
  let blocked = false
  const server = createServer((inbound) => {
    if (blocked) {
      inbound.destroy()
      return
    }
    const outbound = connect(Number(port), host)
    const pair = { inbound, outbound }
    open.add(pair)
    const close = () => {
      inbound.destroy()
      outbound.destroy()
      open.delete(pair)
    }
    inbound.on('error', close).on('close', close)
    outbound.on('error', close).on('close', close)
    inbound.pipe(outbound)
    outbound.pipe(inbound)
  })
  const relayPort = await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)))
  const relay = {
    base: `http://127.0.0.1:${relayPort}`,
    block(on) {
      blocked = on
      if (on) for (const { inbound, outbound } of open) inbound.destroy(), outbound.destroy()
    },
    stop() {
      relay.block(true)
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
  return relay
}
