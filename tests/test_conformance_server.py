"""The official conformance suite as referee: its server scenarios, both revisions.

Runs ``conformance/mcpkit-server.sh all`` (the pinned ``@modelcontextprotocol/conformance``
against ``mcpkit.examples.everything:server`` over HTTP) once, then holds the verdicts
against ``conformance/expected-failures.txt``: every required scenario must pass unless it
is listed there, and a listed scenario that passes must be taken off the list.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "conformance" / "mcpkit-server.sh"
EXPECTED_FILE = ROOT / "conformance" / "expected-failures.txt"
CONFORMANCE_DIR = Path(os.environ.get("CONFORMANCE_DIR", "/tmp/conf"))
REVISIONS = ("2025-11-25", "2026-07-28")

pytestmark = pytest.mark.skipif(
    shutil.which("npm") is None and not (CONFORMANCE_DIR / "conformance").exists(),
    reason="npm not found: the conformance suite and a Node 22+ are installed from the npm "
           "registry (CI has npm)",
)


def expected_failures() -> dict[tuple[str, str], str]:
    """``{(revision, scenario): reason}`` from conformance/expected-failures.txt."""
    listed = {}
    for line in EXPECTED_FILE.read_text().splitlines():
        line = line.strip()
        if line.startswith("# [client]"):
            break  # the client scenarios' section: tests/test_conformance_client.py reads it
        if not line or line.startswith("#"):
            continue
        revision, scenario, *reason = line.split(None, 2)
        listed[(revision, scenario)] = reason[0] if reason else ""
    return listed


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, str]]:
    results = tmp_path_factory.mktemp("conformance")
    env = {**os.environ, "RESULTS_DIR": str(results), "PYTHON": sys.executable,
           "CONFORMANCE_DIR": str(CONFORMANCE_DIR)}
    run = subprocess.run(["bash", str(SCRIPT), "all"], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=900)
    print(run.stdout)  # the per-scenario table, shown by pytest -s or on failure
    summary = results / "summary.tsv"
    assert summary.exists(), (f"the conformance run wrote no summary (exit {run.returncode})\n"
                              f"{run.stdout[-4000:]}\n{run.stderr[-4000:]}")
    with summary.open() as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert rows, f"the conformance run listed no scenarios\n{run.stdout[-4000:]}"
    return {(row["revision"], row["scenario"]): row for row in rows}


@pytest.mark.parametrize("revision", REVISIONS)
def test_required_scenarios_pass(verdicts, revision: str) -> None:
    listed = expected_failures()
    required = [row for (rev, _), row in verdicts.items()
                if rev == revision and row["scoring"] == "required"]
    failing = [f"{row['scenario']}: {row['verdict']} ({row['checks_failed']} checks failed)"
               for row in required
               if row["verdict"] != "PASS" and (revision, row["scenario"]) not in listed]
    passed = sum(row["verdict"] == "PASS" for row in required)
    assert not failing, (f"{revision}: passed {passed}/{len(required)} required scenarios; "
                         "failing and not in conformance/expected-failures.txt:\n  "
                         + "\n  ".join(failing))


def test_expected_failures_are_current(verdicts) -> None:
    listed = expected_failures()
    now_passing = [f"{rev} {name}" for (rev, name) in listed
                   if verdicts.get((rev, name), {}).get("verdict") == "PASS"]
    unknown = [f"{rev} {name}" for (rev, name) in listed if (rev, name) not in verdicts]
    assert not now_passing, ("these pass now: delete their lines from "
                             "conformance/expected-failures.txt:\n  " + "\n  ".join(now_passing))
    assert not unknown, ("conformance/expected-failures.txt names scenarios the suite did not "
                         "run (renamed or dropped?):\n  " + "\n  ".join(unknown))
