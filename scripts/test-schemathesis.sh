#!/usr/bin/env bash
# schemathesis (PyPI) against the team server's OpenAPI document (docs/team-server.md, "Tests"):
# starts a PostgreSQL cluster of its own and the server (the test build) on the demo study, logs
# in as the lead and as a rater with a queue, and lets schemathesis generate requests for every
# operation with each token and with none. Fails on any 5xx and on any response outside the
# schema the document gives for its status. Bounded (SCHEMATHESIS_EXAMPLES per operation, default
# 60, fixed seed; the coverage phase adds its own boundary cases) so that the three runs take
# about a minute and a half: at 100, with 21 operations, they took 161 s of CI's 45-minute budget. schemathesis is installed into a venv by
# `bash scripts/setup.sh --with-test-tools`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
VENV="${SCHEMATHESIS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/neurorater/schemathesis-venv}"
SCHEMATHESIS="$VENV/bin/schemathesis"
[ -x "$SCHEMATHESIS" ] || {
  echo "schemathesis is not installed in $VENV: bash scripts/setup.sh --with-test-tools" >&2
  exit 2
}
# shellcheck source=lib/postgres.sh
. "$ROOT/scripts/lib/postgres.sh"

# The one build the tests and the app share (a narrower selection would resolve features anew).
bash "$ROOT/scripts/build-app.sh"
NEURORATER="$CARGO_TARGET_DIR/debug/neurorater"
NEURORATER_SERVER="$CARGO_TARGET_DIR/debug/neurorater-server"

PG_ON_EXIT=server_stop
pg_start "$(free_port)"
demo_on_server
LISTEN="127.0.0.1:$(free_port)"
server_start
lead_login
RATER_PASSWORD="the rater's long password"
RATER_CODE=$(api_post "/api/studies/$STUDY/invitations" \
  '{"username": "ada", "role": "rater", "site": "Site A", "clinical_role": "neurologist"}' "$LEAD_TOKEN" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["code"])')
api_post /api/invitations/accept "{\"code\": \"$RATER_CODE\", \"password\": \"$RATER_PASSWORD\"}" >/dev/null
api_post "/api/studies/$STUDY/top-up" '{"raters": ["ada"], "per_rater": 3}' "$LEAD_TOKEN" >/dev/null
RATER_TOKEN=$(api_post /api/login "{\"username\": \"ada\", \"password\": \"$RATER_PASSWORD\"}" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')

# Path parameters pinned to what exists, so that requests reach the handlers' logic rather than
# "not found"; bodies and the rest are generated.
ASSIGNMENT=$(curl -sf "http://$LISTEN/api/studies/$STUDY/queue" -H "authorization: Bearer $RATER_TOKEN" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["assignment"])')
CASE_ID=$("$PG_BIN/psql" "$DATABASE" -X -A -t -q -c "SELECT case_id FROM cases ORDER BY id LIMIT 1")
cat >"$PG_WORK/schemathesis.toml" <<TOML
[parameters]
"path.study" = "$STUDY"
"path.assignment" = $ASSIGNMENT
"path.case_id" = "$CASE_ID"
"path.username" = "ada"
"path.version" = 1
TOML

run() {
  local who=$1
  shift
  echo "== schemathesis as $who"
  # Logout is left out of the runs with a token: it would end the session the rest need. Run
  # from the cluster's folder, where schemathesis leaves its cache. One worker: with two, the
  # tool itself crashed once in CI ("SystemError: AST constructor recursion depth mismatch" in
  # Hypothesis's source parsing, which is not thread-safe on this Python), failing a run whose
  # every request had passed.
  (cd "$PG_WORK" && "$SCHEMATHESIS" --config-file "$PG_WORK/schemathesis.toml" --no-color run "http://$LISTEN/openapi.json" \
    --checks not_a_server_error,response_schema_conformance \
    --max-examples "${SCHEMATHESIS_EXAMPLES:-60}" --seed 16 --workers 1 \
    --phases examples,coverage,fuzzing \
    --report junit --report-junit-path "$PG_WORK/schemathesis-$who.xml" "$@")
}
status=0
# Logging out, ending a session by its number and the lead resetting ada's password would end
# the session the rest of the run uses; each is probed per role in server/tests/team_server.rs.
KEEP_SESSIONS=(--exclude-path /api/logout --exclude-path '/api/sessions/{id}'
  --exclude-path '/api/studies/{study}/members/{username}/password-reset')
run lead -H "Authorization: Bearer $LEAD_TOKEN" "${KEEP_SESSIONS[@]}" || status=1
run rater -H "Authorization: Bearer $RATER_TOKEN" "${KEEP_SESSIONS[@]}" || status=1
run nobody || status=1
if [ $status -ne 0 ]; then
  echo "schemathesis found failures; the server's log:" >&2
  grep -E ' 5[0-9][0-9] |^error' "$PG_WORK/server.log" | head -20 >&2 || true
fi
exit $status
