"""A legacy-only server: answers server/discover with -32601 (or, --silent-probe, not at all)."""

import sys

import rawlib

if __name__ == "__main__":
    mode = "silent" if "--silent-probe" in sys.argv else "error"
    rawlib.serve({"echo": rawlib.echo}, name="legacy", discover=mode)
