#!/usr/bin/env bash
# Run the conformance suite's client scenarios against mcpkit's Client.
#
#   conformance/mcpkit-client.sh [REVISION]     REVISION: 2025-11-25 | 2026-07-28 | all (default)
#
# Runs client.sh with `PYTHON conformance/mcpkit-client.py` as the client command: for each
# client scenario REVISION requires (the auth/* ones included: CLIENT_SCOPE defaults to all
# here; CLIENT_SCOPE=nonauth leaves them out) and each not-scored one, the harness starts a mock server and runs the
# command with its URL appended (see mcpkit-client.py). Installs the pinned suite on first
# use; takes about a minute for both revisions.
#
# Environment: PYTHON (default: .venv/bin/python if there is one, else python3), plus
# everything client.sh reads (CONFORMANCE_DIR, RESULTS_DIR, SCENARIOS, CLIENT_SCOPE, ...).
# The verdicts land in RESULTS_DIR/summary.tsv; tests/test_conformance_client.py compares
# them with conformance/expected-failures.txt.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
    if [ -x "$HERE/../.venv/bin/python" ]; then PY="$HERE/../.venv/bin/python"; else PY=python3; fi
fi
case "$PY$HERE" in
    *" "*) echo "mcpkit-client.sh: the harness splits the command on spaces; '$PY' or '$HERE' has one" >&2; exit 2 ;;
esac
export CLIENT_SCOPE="${CLIENT_SCOPE:-all}"
exec bash "$HERE/client.sh" "$PY $HERE/mcpkit-client.py" "${1:-all}"
