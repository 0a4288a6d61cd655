"""The official conformance suite as referee: its server scenarios, both revisions.

Runs ``conformance/mcpkit-server.sh all`` (the pinned ``@modelcontextprotocol/conformance``
against ``mcpkit.examples.everything:server`` over HTTP) once, then holds the verdicts
against ``conformance/expected-failures.txt``: every required scenario must pass unless it
is listed there, and a listed scenario that passes must be taken off the list.
"""

from __future__ import annotations

import pytest
from conformance_support import REVISIONS, expected_failures, needs_npm, run_harness

pytestmark = needs_npm


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, str]]:
    return run_harness("mcpkit-server.sh", tmp_path_factory.mktemp("conformance"))


@pytest.mark.parametrize("revision", REVISIONS)
def test_required_scenarios_pass(verdicts, revision: str) -> None:
    listed = expected_failures("server")
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
    listed = expected_failures("server")
    now_passing = [f"{rev} {name}" for (rev, name) in listed
                   if verdicts.get((rev, name), {}).get("verdict") == "PASS"]
    unknown = [f"{rev} {name}" for (rev, name) in listed if (rev, name) not in verdicts]
    assert not now_passing, ("these pass now: delete their lines from "
                             "conformance/expected-failures.txt:\n  " + "\n  ".join(now_passing))
    assert not unknown, ("conformance/expected-failures.txt names scenarios the suite did not "
                         "run (renamed or dropped?):\n  " + "\n  ".join(unknown))
