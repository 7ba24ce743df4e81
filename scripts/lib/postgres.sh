# Sourced by scripts/team-demo.sh and scripts/bench/team_load.sh: a PostgreSQL cluster of their
# own in a temporary folder, on a loopback port, stopped and deleted on exit. PostgreSQL refuses
# to run as root: then the cluster is the postgres user's.
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
