"""A quick-starting stdlib server (for tests that run many servers)."""

import sys

import rawlib

if __name__ == "__main__":
    rawlib.serve({"echo": rawlib.echo}, name=sys.argv[1] if len(sys.argv) > 1 else "fast")
