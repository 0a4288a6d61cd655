"""Reads the first message (the probe, or initialize), complains on stderr and exits 3."""

import sys

if __name__ == "__main__":
    sys.stdin.buffer.readline()
    sys.stderr.write("fatal: missing configuration file settings.toml\n")
    sys.exit(3)
