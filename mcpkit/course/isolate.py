"""Run one graded part of one submission in a process of its own: the class grader's sandbox.

``mcpkit-course grade`` starts ``python -I -m mcpkit.course.isolate`` once per graded cell of
every submission and writes a job to its standard input: the lab's pristine setup cells, the
learner's exercise cells (found by the ids the *pristine* lab gives its exercise cells), the
pristine graded cell, the language, and the seed and scale of the hidden run. The process
answers with one line on its standard output, ``<token> {json}``, and nothing else reaches it.

Theory of operation
-------------------
Nothing the learner did outside the exercise cells exists here: no other cell runs, no saved
output is read, no kernel (so no IPython hooks) is involved, and the graded cell is the
course's own. What is left is the exercise code itself, and that is checked twice:

* before it runs, statically (:func:`mcpkit.grading.sandbox.scan`): what it imports and
  names;
* while it runs (:mod:`mcpkit.grading.guard`, an audit hook): it may not reach a frame, code
  or the collector's objects, and nothing in this process may write outside the temporary
  folder;
* after each exercise cell ran, and again after the checks ran
  (:func:`mcpkit.grading.sandbox.changes`): mcpkit and a few standard modules must be as
  they were imported.

The rules live in :mod:`mcpkit.grading.sandbox`, which the notebook's graded cells read too.
A breach *flags* the part whose own exercise cells (those between the previous graded cell
and this one) did it: that part scores zero, and its report says what, where and why, in the
learner's language. A later part that only depends on a flagged cell runs with that cell as
the lab gives it (unfilled), so one breach does not cost the clean parts. A change made at
run time by an earlier part's cell cannot be undone in this process: the answer asks the
parent to run the part again with that cell unfilled (``"status": "rerun"``).

The parent enforces the wall-clock limit by killing this process, so neither an endless loop
nor a bare ``except:`` can hold grading up; the memory limit is set here with
``resource.setrlimit``. Where the system allows it (root, util-linux), the parent starts this
process confined (:mod:`mcpkit.course.confine`): mcpkit, Python and the course read-only to
it and to every process it starts, and all of them gone when it ends.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from typing import Any

from ..grading import guard, sandbox

MEMORY_LIMIT = 1024 * 1024 * 1024  # bytes of address space
# The rules, re-exported for the class grader's callers.
scan = sandbox.scan
import_bindings = sandbox.import_bindings


def _flagged(problems: list[sandbox.Problem], job: dict[str, Any],
             total: int | None = None) -> dict[str, Any]:
    where = _cell_names(job)
    return {"status": "flagged", "passed": 0, "total": total, "report": "",
            "problems": list(dict.fromkeys(sandbox.describe(p, where) for p in problems))}


def _cell_names(job: dict[str, Any]) -> dict[str, str]:
    """cell id -> "exercise N" in the learner's language."""
    from mcpkit.grading import core

    return {cell: core._("exercise {n}", "ejercicio {n}").format(n=n)
            for cell, n in job.get("numbers", {}).items()}


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Define the exercises, run the graded cell, and say how it went.

    ``job`` holds the setup, the exercise cells above the graded cell (``exercises``, pairs
    of cell id and code), the graded cell, the language, seed and scale, and for the flags:
    ``own`` (this part's exercise cells), ``stubs`` (each exercise cell as the lab gives it),
    ``stubbed`` (cells to run unfilled) and ``numbers`` (cell id -> exercise number).
    """
    from mcpkit import grading
    from mcpkit.grading import core

    grading.set_language(job["lang"])  # the flags' words; set again for the checks below
    # Everything a check may use is imported now, before any learner code runs.
    for module in ("framing", "jsonrpc", "dispatch", "server"):
        __import__(f"mcpkit.{module}")
    checks_failed = core.ChecksFailed
    snap = sandbox.snapshot()
    own = set(job["own"] if "own" in job else [cell for cell, _code in job["exercises"]])
    stubs = job.get("stubs", {})
    unfilled = set(job.get("stubbed", []))
    problems: list[sandbox.Problem] = []
    for cell_id, code in job["exercises"]:
        found = sandbox.scan(code, job["setup_names"], job["off_limits"], cell=cell_id)
        if found and cell_id not in own and cell_id in stubs:
            unfilled.add(cell_id)  # flagged in its own part; here it runs as the lab gives it
        else:
            problems += found
    if problems:
        return _flagged(problems, job)

    breaches = guard.install(cell for cell, _code in job["exercises"])

    def breached() -> dict[str, Any]:
        """Flag this part for what the guard refused, or run it again without an earlier
        part's cell that did it (flagged in its own part)."""
        theirs = {p.cell for p in breaches if p.cell not in own and p.cell in stubs}
        if theirs and all(p.cell in theirs for p in breaches):
            return {"status": "rerun", "stub": sorted(theirs), "passed": 0, "total": None,
                    "problems": [], "report": ""}
        return _flagged(list(breaches), job)

    namespace: dict[str, Any] = {"__name__": "__main__"}
    cell_errors: list[str] = []
    notes: list[str] = []
    where = _cell_names(job)
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        for cell_id, code in job["setup"]:
            exec(compile(code, cell_id, "exec"), namespace)
        for cell_id, code in job["exercises"]:
            if cell_id in unfilled:
                code = stubs[cell_id]
                notes.append(core._(
                    "({cell} is flagged in its own part: this part ran with it unfilled)",
                    "({cell} está marcado en su propia parte: esta parte se ejecutó con esa "
                    "celda sin rellenar)").format(cell=where.get(cell_id, cell_id)))
            try:
                exec(compile(code, cell_id, "exec"), namespace)
            except BaseException as exc:  # noqa: BLE001 - the learner's, reported below
                cell_errors.append(f"{where.get(cell_id, cell_id)}: "
                                   f"{type(exc).__name__}: {exc}"[:300])
            if breaches:
                return breached()
            changed = sandbox.changes(snap)
            if changed and cell_id in own:
                return _flagged([sandbox.Problem(p.kind, p.name, cell_id) for p in changed],
                                job)
            if changed:  # an earlier part's cell did it: run again without that cell
                return {"status": "rerun", "stub": [cell_id], "passed": 0, "total": None,
                        "problems": [], "report": ""}

    grading.set_language(job["lang"])
    core.configure(job["seed"], job["scale"], every_detail=job.get("every_detail", False))
    namespace["grading"] = grading  # the real one, whatever the cells did with the name
    printed = io.StringIO()
    verdicts = core.verdicts  # bound now: the list object itself is what counts
    verdicts.clear()
    passed: int | None
    total: int | None
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(job["graded"], "graded", "exec"), namespace)
    except checks_failed as exc:
        status, report = "failed", exc.report
    except BaseException as exc:  # noqa: BLE001 - a crash of this part only
        status, report = "crashed", f"{type(exc).__name__}: {exc}"[:2000]
    else:
        status, report = "passed", printed.getvalue()
    if cell_errors or notes:  # what the learner would have seen when running those cells
        report = "\n".join([*notes, *cell_errors, report])
    if status == "crashed" or not verdicts:
        passed, total, status = 0, None, "crashed"
    else:
        passed, total = verdicts[-1]
        if status == "passed" and passed != total:
            status = "failed"
    if breaches:
        return breached()
    changed = sandbox.changes(snap) + sandbox.handed_in
    if changed:
        return _flagged(changed, job, total)
    return {"status": status, "passed": passed, "total": total, "report": report,
            "problems": [], "cell_errors": cell_errors}


def main() -> None:
    job = json.loads(sys.stdin.read())
    sys.dont_write_bytecode = True  # the guard lets nothing be written outside the temp folder
    # The answer goes to a private copy of stdout; fds 1 and 2 lead nowhere from here on.
    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass  # not on this platform: the parent's time limit still holds
    try:
        result = run_job(job)
    except MemoryError:
        result = {"status": "crashed", "passed": 0, "total": None, "problems": [],
                  "report": "MemoryError"}
    answer.write(job["token"] + " " + json.dumps(result) + "\n")
    answer.flush()
    os._exit(0)  # no atexit handlers or threads of the learner's get to run after this


if __name__ == "__main__":
    main()
