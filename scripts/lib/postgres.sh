# Sourced by scripts/team-demo.sh, scripts/bench/team_load.sh and scripts/test-schemathesis.sh: a
# PostgreSQL cluster of their own in a temporary folder, on a loopback port, stopped and deleted
# on exit (PostgreSQL refuses to run as root: then the cluster is the postgres user's), and the
# team server on it.
#   pg_start PORT   sets PG_WORK (the folder) and DATABASE (the URL of an empty database)
#   pg_stop         (registered on EXIT by pg_start, with any function named in PG_ON_EXIT)

PG_BIN="${NEURORATER_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"

pg_as_owner() { if [ "$(id -u)" -eq 0 ]; then su postgres -c "$1"; else sh -c "$1"; fi; }

pg_stop() {
  [ -n "${PG_ON_EXIT:-}" ] && "$PG_ON_EXIT"
  pg_as_owner "$PG_BIN/pg_ctl -D $PG_WORK/data -m fast stop" >/dev/null 2>&1 || true
  rm -rf "$PG_WORK"
}

pg_start() {
  local port=$1
  [ -x "$PG_BIN/initdb" ] || {
    echo "PostgreSQL's programs are missing: bash scripts/setup.sh --with-test-tools" >&2
    exit 2
  }
  PG_WORK="$(mktemp -d -t neurorater-pg.XXXXXX)"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$PG_WORK"
  trap pg_stop EXIT
  pg_as_owner "$PG_BIN/initdb -D $PG_WORK/data -A trust -U postgres -E UTF8 >/dev/null"
  pg_as_owner "$PG_BIN/pg_ctl -D $PG_WORK/data -o '-p $port -k $PG_WORK -c listen_addresses=127.0.0.1' -l $PG_WORK/postgres.log -w start >/dev/null"
  "$PG_BIN/psql" -h 127.0.0.1 -p "$port" -U postgres -q -c "CREATE DATABASE neurorater"
  DATABASE="postgres://postgres@127.0.0.1:$port/neurorater"
}

# The demo study in a local database under $PG_WORK, copied onto $DATABASE with "lead" invited;
# sets STUDY and LEAD_CODE. Needs NEURORATER and NEURORATER_SERVER (the binaries).
demo_on_server() {
  mkdir -p "$PG_WORK/local"
  "$NEURORATER" demo --out "$PG_WORK/local/demo" >/dev/null
  "$NEURORATER" import "$PG_WORK/local/demo" --db "$PG_WORK/local/study.sqlite" >/dev/null
  STUDY=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["study"]["id"])' \
    "$PG_WORK/local/demo/study.json")
  local report
  report=$("$NEURORATER_SERVER" import --database "$DATABASE" --db "$PG_WORK/local/study.sqlite" \
    --study "$STUDY" --lead lead --lead-site "Demo hospital")
  LEAD_CODE=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["lead_invitation"]["code"])' "$report")
}

# A loopback port nobody listens on now.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# `neurorater-server serve` on $DATABASE at $LISTEN, in the background, its log appended to
# $PG_WORK/server.log; sets SERVER_PID, writes it to $PG_WORK/server.pid, and returns once
# /openapi.json answers. Needs NEURORATER_SERVER.
server_start() {
  "$NEURORATER_SERVER" serve --database "$DATABASE" --listen "$LISTEN" >/dev/null 2>>"$PG_WORK/server.log" &
  SERVER_PID=$!
  echo "$SERVER_PID" >"$PG_WORK/server.pid"
  for _ in $(seq 100); do curl -sf "http://$LISTEN/openapi.json" >/dev/null 2>&1 && return; sleep 0.1; done
  echo "the server did not start: $(tail -5 "$PG_WORK/server.log")" >&2
  exit 1
}

# Stops the server whose pid is in $PG_WORK/server.pid (SIGTERM, then SIGKILL after 5 s).
server_stop() {
  local pid
  pid=$(cat "$PG_WORK/server.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

# POST a JSON body to the server at $LISTEN (with a bearer token when $3 is given); prints the
# reply, fails on an HTTP error.
api_post() {
  curl -sf -X POST "http://$LISTEN$1" -H 'content-type: application/json' \
    ${3:+-H "authorization: Bearer $3"} -d "$2"
}

# The lead accepts $LEAD_CODE with a password and logs in; sets LEAD_TOKEN.
lead_login() {
  local password="the lead's long password"
  api_post /api/invitations/accept "{\"code\": \"$LEAD_CODE\", \"password\": \"$password\"}" >/dev/null
  LEAD_TOKEN=$(api_post /api/login "{\"username\": \"lead\", \"password\": \"$password\"}" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
}
