"""Serves, then refuses to exit on end of input; with --ignore-term it ignores SIGTERM too."""

import signal
import sys
import time

import rawlib

if __name__ == "__main__":
    if "--ignore-term" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    rawlib.serve({"echo": rawlib.echo}, name="stubborn")
    time.sleep(60)  # stdin is closed: a well-behaved server would exit now
