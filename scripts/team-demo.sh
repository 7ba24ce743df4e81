#!/usr/bin/env bash
# A team in one command: builds the CLI, starts a PostgreSQL cluster of its own in a temporary
# folder, copies the demo study onto it and runs the team server (docs/team-server.md). Prints
# the lead's one-time code and how to log in. Ctrl-C stops the server and the cluster and
# deletes the folder. Needs PostgreSQL's programs: bash scripts/setup.sh --with-test-tools.
#   TEAM_DEMO_LISTEN (default 127.0.0.1:8080), TEAM_DEMO_PG_PORT (default 55432).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
LISTEN="${TEAM_DEMO_LISTEN:-127.0.0.1:8080}"
# shellcheck source=lib/postgres.sh
. "$ROOT/scripts/lib/postgres.sh"

echo "team-demo: building neurorater and neurorater-server"
# The one build the tests and the app share (a narrower selection would resolve features anew).
bash "$ROOT/scripts/build-app.sh"
NEURORATER="$CARGO_TARGET_DIR/debug/neurorater"
NEURORATER_SERVER="$CARGO_TARGET_DIR/debug/neurorater-server"

SERVER_PID=""
stop_server() { [ -z "$SERVER_PID" ] || { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; } || true; }
PG_ON_EXIT=stop_server
pg_start "${TEAM_DEMO_PG_PORT:-55432}"
echo "team-demo: PostgreSQL in $PG_WORK; copying the demo study onto it"
demo_on_server

"$NEURORATER_SERVER" serve --database "$DATABASE" --listen "$LISTEN" &
SERVER_PID=$!
BASE="http://$LISTEN"
for _ in $(seq 50); do curl -sf "$BASE/openapi.json" >/dev/null 2>&1 && break; sleep 0.2; done
cat <<HELP

The team server runs at $BASE (API: $BASE/openapi.json), study "$STUDY".
The lead's one-time code: $LEAD_CODE

  # choose the lead's password (12 characters or more), then log in:
  curl -s -X POST $BASE/api/invitations/accept -H 'content-type: application/json' \\
       -d '{"code": "$LEAD_CODE", "password": "choose a long password"}'
  curl -s -X POST $BASE/api/login -H 'content-type: application/json' \\
       -d '{"username": "lead", "password": "choose a long password"}'
  # invite a rater and top up their queue (TOKEN from the login):
  curl -s -X POST $BASE/api/studies/$STUDY/invitations -H "authorization: Bearer TOKEN" \\
       -H 'content-type: application/json' -d '{"username": "ada", "role": "rater", "site": "Site A", "clinical_role": "neurologist"}'
  curl -s -X POST $BASE/api/studies/$STUDY/top-up -H "authorization: Bearer TOKEN" \\
       -H 'content-type: application/json' -d '{"raters": ["ada"], "per_rater": 10}'

docs/team-server.md describes every endpoint. Ctrl-C stops the server and PostgreSQL.
HELP
wait "$SERVER_PID"
