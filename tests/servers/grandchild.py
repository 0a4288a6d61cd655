"""Starts a grandchild that inherits stdout and stderr and outlives this server (as the
children of ``npx`` or shell wrappers can); the "grandchild" tool returns its pid."""

import subprocess
import sys

import rawlib

if __name__ == "__main__":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             stdin=subprocess.DEVNULL)
    rawlib.serve({"grandchild": lambda arguments: str(child.pid)}, name="parent")
