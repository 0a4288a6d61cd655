#!/usr/bin/env bash
# Run the conformance suite's server scenarios against mcpkit's everything server.
#
#   conformance/mcpkit-server.sh [REVISION]     REVISION: 2025-11-25 | 2026-07-28 | all (default)
#
# Starts `mcpkit serve mcpkit.examples.everything:server --http --port PORT` on 127.0.0.1
# (through server.sh's SERVER_CMD, so as root it runs in a private loopback-only network
# namespace), runs `conformance server --requirements REVISION` for each revision, stops
# the server, and prints one verdict per scenario. Installs the pinned suite on first use.
#
# Environment: PYTHON (default: python3 on PATH), PORT (default: a free one), plus
# everything server.sh reads (CONFORMANCE_DIR, RESULTS_DIR, ...). The verdicts land in
# RESULTS_DIR/summary.tsv; tests/test_conformance_server.py compares them with
# conformance/expected-failures.txt.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${PYTHON:-python3}"
PORT="${PORT:-$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
TARGET=mcpkit.examples.everything:server

serve="$PY -m mcpkit serve $TARGET --http --host 127.0.0.1 --port $PORT"
export SERVER_CMD="cd '$HERE/..' && exec $serve"
exec bash "$HERE/server.sh" "http://127.0.0.1:$PORT/mcp" "${1:-all}"
