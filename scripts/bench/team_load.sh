#!/usr/bin/env bash
# The team server under load (docs/performance.md, "Team server under load") and under faults
# (docs/reliability.md, "Team server under faults"):
#
#   bash scripts/bench/team_load.sh RATERS SECONDS            # load: e.g. 50 120, then 200 120
#   bash scripts/bench/team_load.sh RATERS SECONDS --faults   # the same load, with faults
#
# Starts a PostgreSQL cluster of its own on a free loopback port, a release server on another,
# copies the demo study onto it with the lead invited, logs the lead in, and runs the load
# generator (server/examples/team_load.rs): RATERS accounts through the invitation flow, each
# saving an edit every 500 ms for SECONDS. With --faults, while the load runs: the server is
# killed with SIGKILL at 20 s and restarted 2 s later, PostgreSQL is restarted (pg_ctl restart
# -m fast) at 50 s, and rater 0 is cut off from 30 s for 60 s; at the end the generator counts
# from PostgreSQL that no acknowledged edit was lost and none stored twice.
# Everything it started is stopped on exit. Exit status: the generator's (1 when a check fails).
set -euo pipefail

RATERS="${1:?usage: team_load.sh RATERS SECONDS [--faults]}"
SECONDS_EACH="${2:?usage: team_load.sh RATERS SECONDS [--faults]}"
FAULTS="${3:-}"
[ -z "$FAULTS" ] || [ "$FAULTS" = --faults ] || { echo "unknown option $FAULTS" >&2; exit 2; }

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
# shellcheck source=../lib/postgres.sh
. "$ROOT/scripts/lib/postgres.sh"

# The server and the generator as they would be deployed; the CLI only writes the demo study,
# so the test suite's (dev profile) build of it serves.
cargo build -q --release -p neurorater-server --bins --example team_load --manifest-path "$ROOT/Cargo.toml"
cargo build -q -p neurorater-cli --manifest-path "$ROOT/Cargo.toml"
NEURORATER="$CARGO_TARGET_DIR/debug/neurorater"
NEURORATER_SERVER="$CARGO_TARGET_DIR/release/neurorater-server"
LOAD="$CARGO_TARGET_DIR/release/examples/team_load"

FAULTS_PID=""
stop_all() {
  [ -z "$FAULTS_PID" ] || { kill "$FAULTS_PID" 2>/dev/null; wait "$FAULTS_PID" 2>/dev/null; } || true
  server_stop
}
PG_ON_EXIT=stop_all
pg_start "$(free_port)"
demo_on_server
LISTEN="127.0.0.1:$(free_port)"
server_start
lead_login

echo "team_load: $RATERS raters x $SECONDS_EACH s${FAULTS:+ with faults}; $(nproc) cores," \
  "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"

ARGS=(--base "http://$LISTEN" --study "$STUDY" --lead-token "$LEAD_TOKEN" --raters "$RATERS"
  --seconds "$SECONDS_EACH" --prefix "rater" --database "$DATABASE")
if [ -z "$FAULTS" ]; then
  "$LOAD" "${ARGS[@]}" --server-pid "$SERVER_PID"
  exit $?
fi

# The faults, timed from the moment the generator starts editing (after enrolment).
STARTED="$PG_WORK/load-started"
inject_faults() {
  while [ ! -e "$STARTED" ]; do sleep 0.1; done
  sleep 20
  echo "fault: the server killed with SIGKILL (pid $SERVER_PID)"
  kill -KILL "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  sleep 2
  server_start
  echo "fault: the server restarted (pid $SERVER_PID)"
  sleep 28
  echo "fault: PostgreSQL restarted (pg_ctl restart -m fast)"
  pg_as_owner "$PG_BIN/pg_ctl -D $PG_WORK/data -m fast -w restart -l $PG_WORK/postgres.log >/dev/null"
  echo "fault: PostgreSQL back"
}
inject_faults &
FAULTS_PID=$!
"$LOAD" "${ARGS[@]}" --faults --cut-off 30:60 --started "$STARTED"
