#!/usr/bin/env bash
# Install the pinned third-party MCP peers the interop tests talk to (npm reference servers,
# the official TypeScript SDK, the MCP Inspector) into interop/node_modules, from the npm
# registry, exactly as interop/package-lock.json pins them. Idempotent.
#
#   install.sh        prints the path of a Node new enough for every peer (>= 22.19,
#                     the Inspector's floor): the one the conformance suite runs on
#                     (conformance/install.sh fetches Node 24 from the npm registry when
#                     the node on PATH is older)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CONFORMANCE_DIR="${CONFORMANCE_DIR:-/tmp/conf}"

command -v npm >/dev/null || { echo "install.sh: npm not found on PATH" >&2; exit 2; }
"$HERE/../conformance/install.sh" "$CONFORMANCE_DIR" >&2
NODE="$CONFORMANCE_DIR/node-bin"

stamp="$HERE/node_modules/.mcpkit-lock"
want="$(sha256sum "$HERE/package-lock.json" | cut -c1-16)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    # npm ci: installs exactly what the lock pins and never rewrites it (it fails instead if
    # package.json and the lock disagree; then run npm install once and commit the lock).
    (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error >&2)
    echo "$want" >"$stamp"
fi
echo "$NODE"
