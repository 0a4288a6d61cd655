"""What the server and client conformance tests share: where the pinned suite lives, the
expected-failures file (a server section, then a client one after ``# [client]``), and one
run of a harness script whose ``summary.tsv`` becomes ``{(revision, scenario): row}``."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXPECTED_FILE = ROOT / "conformance" / "expected-failures.txt"
CLIENT_SECTION = "# [client]"
CONFORMANCE_DIR = Path(os.environ.get("CONFORMANCE_DIR", "/tmp/conf"))
REVISIONS = ("2025-11-25", "2026-07-28")

needs_npm = pytest.mark.skipif(
    shutil.which("npm") is None and not (CONFORMANCE_DIR / "conformance").exists(),
    reason="npm not found: the conformance suite and a Node 22+ are installed from the npm "
           "registry (CI has npm)",
)


def expected_failures(section: str) -> dict[tuple[str, str], str]:
    """``{(revision, scenario): reason}`` from the ``"server"`` or ``"client"`` section."""
    listed: dict[tuple[str, str], str] = {}
    current = "server"
    for line in EXPECTED_FILE.read_text().splitlines():
        line = line.strip()
        if line.startswith(CLIENT_SECTION):
            current = "client"
            continue
        if current != section or not line or line.startswith("#"):
            continue
        revision, scenario, *reason = line.split(None, 2)
        listed[(revision, scenario)] = reason[0] if reason else ""
    return listed


def run_harness(script: str, results: Path,
                **extra_env: str) -> dict[tuple[str, str], dict[str, str]]:
    """Run ``conformance/<script> all`` once; its verdicts by (revision, scenario)."""
    env = {**os.environ, "RESULTS_DIR": str(results), "PYTHON": sys.executable,
           "CONFORMANCE_DIR": str(CONFORMANCE_DIR), **extra_env}
    run = subprocess.run(["bash", str(ROOT / "conformance" / script), "all"], env=env,
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    print(run.stdout)  # the per-scenario table, shown by pytest -s or on failure
    summary = results / "summary.tsv"
    assert summary.exists(), (f"the conformance run wrote no summary (exit {run.returncode})\n"
                              f"{run.stdout[-4000:]}\n{run.stderr[-4000:]}")
    with summary.open() as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert rows, f"the conformance run listed no scenarios\n{run.stdout[-4000:]}"
    return {(row["revision"], row["scenario"]): row for row in rows}
