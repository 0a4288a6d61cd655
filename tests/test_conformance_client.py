"""The official conformance suite as referee: its client scenarios, both revisions.

Runs ``conformance/mcpkit-client.sh all`` (the pinned ``@modelcontextprotocol/conformance``
starts a mock server per scenario and runs ``conformance/mcpkit-client.py`` against it,
one scenario at a time, ``auth/*`` included: ``CLIENT_SCOPE=all``) once, then holds the
verdicts against the client section of ``conformance/expected-failures.txt`` (the lines
after ``# [client]``): every required scenario must pass unless it is listed there, and a
listed scenario that passes must be taken off the list.
"""

from __future__ import annotations

import pytest
from conformance_support import REVISIONS, expected_failures, needs_npm, run_harness

pytestmark = needs_npm


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, str]]:
    return run_harness("mcpkit-client.sh", tmp_path_factory.mktemp("conformance-client"),
                       CLIENT_SCOPE="all")


def _client_log(row: dict[str, str]) -> str:
    """Where the harness kept the client's stderr, for the failure message."""
    return f"RESULTS_DIR/client-{row['revision']}/{row['scenario'].replace('/', '_')}*/stderr.txt"


@pytest.mark.parametrize("revision", REVISIONS)
def test_required_scenarios_pass(verdicts, revision: str) -> None:
    listed = expected_failures("client")
    required = [row for (rev, _), row in verdicts.items()
                if rev == revision and row["scoring"] == "required"]
    assert required, f"no required client scenario ran for {revision}"
    failing = [f"{row['scenario']}: {row['verdict']} ({row['checks_failed']} checks failed; "
               f"see {_client_log(row)})"
               for row in required
               if row["verdict"] != "PASS" and (revision, row["scenario"]) not in listed]
    passed = sum(row["verdict"] == "PASS" for row in required)
    assert not failing, (f"{revision}: passed {passed}/{len(required)} required client "
                         "scenarios; failing and not in conformance/expected-failures.txt:\n  "
                         + "\n  ".join(failing))


@pytest.mark.parametrize("revision", REVISIONS)
def test_auth_scenarios_ran(verdicts, revision: str) -> None:
    # OAuth is scored: the required auth/* scenarios ran (and passed, above), and so did
    # the not-scored extension ones (DPoP, workload identity, ...), reported.
    auth = {name: row for (rev, name), row in verdicts.items()
            if rev == revision and name.startswith("auth/")}
    assert any(row["scoring"] == "required" for row in auth.values()), \
        f"{revision}: no required auth/* scenario ran (CLIENT_SCOPE=all not honoured?)"
    assert any(row["scoring"] != "required" for row in auth.values()), \
        f"{revision}: the not-scored auth/* scenarios did not run"


def test_expected_failures_are_current(verdicts) -> None:
    listed = expected_failures("client")
    now_passing = [f"{rev} {name}" for (rev, name) in listed
                   if verdicts.get((rev, name), {}).get("verdict") == "PASS"]
    unknown = [f"{rev} {name}" for (rev, name) in listed if (rev, name) not in verdicts]
    assert not now_passing, ("these pass now: delete their lines from the client section of "
                             "conformance/expected-failures.txt:\n  " + "\n  ".join(now_passing))
    assert not unknown, ("the client section of conformance/expected-failures.txt names "
                         "scenarios the suite did not run (renamed or dropped?):\n  "
                         + "\n  ".join(unknown))


def test_scenarios_that_are_not_scored_pass_too_unless_listed(verdicts) -> None:
    """Extensions (WIF, enterprise-managed authorization, ...) are not scored by the suite:
    mcpkit holds itself to them anyway, so a regression there fails here."""
    listed = expected_failures("client")
    failing = [f"{rev} {name}: {row['verdict']}" for (rev, name), row in verdicts.items()
               if row["scoring"] != "required" and row["verdict"] not in ("PASS", "EMPTY")
               and (rev, name) not in listed]
    assert not failing, ("not-scored client scenarios failing and not in "
                         "conformance/expected-failures.txt:\n  " + "\n  ".join(failing))
