#!/usr/bin/env bash
# The team server under load (docs/performance.md, "Team server"): a PostgreSQL cluster and a
# server of its own, the demo study, then scripts/bench/team_load.py with 50 and then 200
# simulated raters each saving every 500 ms for TEAM_LOAD_SECONDS (default 120).
# Release build by default (TEAM_LOAD_PROFILE=debug to reuse the test build).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
PROFILE="${TEAM_LOAD_PROFILE:-release}"
SECONDS_EACH="${TEAM_LOAD_SECONDS:-120}"
# shellcheck source=../lib/postgres.sh
. "$ROOT/scripts/lib/postgres.sh"

if [ "$PROFILE" = release ]; then
  cargo build -q --release -p neurorater-cli -p neurorater-server --manifest-path "$ROOT/Cargo.toml"
else
  cargo build -q -p neurorater-cli -p neurorater-server --manifest-path "$ROOT/Cargo.toml"
fi
NEURORATER="$CARGO_TARGET_DIR/$PROFILE/neurorater"
NEURORATER_SERVER="$CARGO_TARGET_DIR/$PROFILE/neurorater-server"

SERVER_PID=""
stop_server() { [ -z "$SERVER_PID" ] || { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; } || true; }
PG_ON_EXIT=stop_server
pg_start "${TEAM_LOAD_PG_PORT:-55433}"
demo_on_server
LISTEN="127.0.0.1:${TEAM_LOAD_PORT:-8089}"
"$NEURORATER_SERVER" serve --database "$DATABASE" --listen "$LISTEN" 2>"$PG_WORK/server.log" &
SERVER_PID=$!
BASE="http://$LISTEN"
for _ in $(seq 50); do curl -sf "$BASE/openapi.json" >/dev/null 2>&1 && break; sleep 0.2; done

PASSWORD="load-test lead password"
curl -sf -X POST "$BASE/api/invitations/accept" -H 'content-type: application/json' \
  -d "{\"code\": \"$LEAD_CODE\", \"password\": \"$PASSWORD\"}" >/dev/null
TOKEN=$(curl -sf -X POST "$BASE/api/login" -H 'content-type: application/json' \
  -d "{\"username\": \"lead\", \"password\": \"$PASSWORD\"}" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')

for raters in ${TEAM_LOAD_RATERS:-50 200}; do
  python3 "$ROOT/scripts/bench/team_load.py" --base "$BASE" --study "$STUDY" \
    --lead-token "$TOKEN" --raters "$raters" --seconds "$SECONDS_EACH" \
    --prefix "r$raters" --server-pid "$SERVER_PID"
done
