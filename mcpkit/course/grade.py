"""Grade a folder of lab submissions, and write a CSV and a JUnit XML report.

Layout of the folder (one sub-folder per learner, lab files named as in ``labs/``)::

    SUBMISSIONS/
        ana/lab01_framing.ipynb
        ana/lab02_jsonrpc.ipynb
        bruno/lab01_framing.ipynb

Theory of operation
-------------------
A learner's notebook is not trusted: its graded cells may have been edited, its saved outputs
say nothing, and any cell may have patched the grader in the learner's kernel. So a grade is
computed from the exercise code alone. For every graded cell of the pristine lab in
``labs/<lang>/`` (the language comes from the notebook's metadata, English when it is
missing), a fresh ``python -I`` process (:mod:`mcpkit.course.isolate`) runs the pristine setup
cells, then the learner's exercise cells (matched by cell id), then the pristine graded cell,
and answers with the checks that passed. That process gets a time limit (it is killed after
it) and a memory limit, so a hang or a crash costs its own part only; code that reaches for
the grader, the interpreter's internals or the lab's reference is *flagged*: the part whose
own exercise cells did it scores zero, and the report names what, where and why.

The checkers run with a seed drawn for this run (the same for the whole class) and
``HIDDEN_SCALE`` times the generated cases of the notebook: cases the learner never saw. A
graded cell earns its points in proportion to the checks that passed. Edited graded cells are
still counted (``edited_graded_cells``) so that an instructor can look, but they change
nothing: the course's own graded cells are the ones that run.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import nbformat

from . import confine
from . import source as src

CSV_FIELDS = ("learner", "lab", "lang", "status", "checks_passed", "checks_total", "points",
              "max_points", "edited_graded_cells", "problems", "submitted", "late")
#: The class grader runs this many times the generated cases a notebook runs.
HIDDEN_SCALE = 4
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# nbval's words when the kernel itself failed (not the learner's code): worth one more try.
_KERNEL_TROUBLE = re.compile(
    r"Kernel (?:died|dead|is dead|didn't respond)|Dead kernel|exceeded waiting for output"
    r"|Kernel dead on test start", re.IGNORECASE)


@dataclass
class Graded:
    """One graded cell of a restored submission."""

    cell_id: str
    code_index: int  # nbval's "Cell N": the cell's position among code cells
    points: float
    total: int
    passed: int = 0
    status: str = "missing"  # passed | failed | timeout | crashed | flagged
    report: str = ""
    problems: list[str] = field(default_factory=list)


@dataclass
class Row:
    learner: str
    lab: str
    lang: str = ""
    status: str = "missing"  # passed | failed | missing | unreadable
    checks_passed: int = 0
    checks_total: int = 0
    points: float = 0.0
    max_points: float = 0.0
    edited_graded_cells: int = 0
    graded: list[Graded] = field(default_factory=list)
    seed: int = 0
    submitted: datetime | None = None  # when it was handed in (exchange folders only)
    late: bool | None = None  # None: no deadline given, or no hand-in time known

    def as_csv(self) -> dict[str, object]:
        return {
            "learner": self.learner, "lab": self.lab, "lang": self.lang, "status": self.status,
            "checks_passed": self.checks_passed, "checks_total": self.checks_total,
            "points": f"{self.points:.2f}", "max_points": f"{self.max_points:g}",
            "edited_graded_cells": self.edited_graded_cells,
            "problems": "; ".join(
                f"{g.cell_id} {g.status}" + (": " + " | ".join(g.problems) if g.problems else "")
                for g in self.graded if g.status not in ("passed", "failed")),
            "submitted": self.submitted.strftime("%Y-%m-%dT%H:%M:%SZ") if self.submitted else "",
            "late": "" if self.late is None else "yes" if self.late else "no",
        }


def _is_graded(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and "graded" in cell.metadata.get("tags", [])


def _expected_total(cell: nbformat.NotebookNode) -> int:
    """How many checks a graded cell of a lab runs (the build records the solution's count)."""
    checks = cell.metadata.get("mcpkit", {}).get("checks")
    if checks is None:
        raise ValueError(f"graded cell {cell.id} has no expected number of checks")
    return int(checks)


def _points(cell: nbformat.NotebookNode) -> float:
    return float(cell.metadata.get("mcpkit", {}).get("points", 1))


def restore(submission: nbformat.NotebookNode, pristine: nbformat.NotebookNode) -> int:
    """Put the pristine graded cells into ``submission``; return how many had been edited."""
    edited = 0
    previous_id: str | None = None
    for cell in pristine.cells:
        if _is_graded(cell):
            positions = {c.get("id"): i for i, c in enumerate(submission.cells)}
            if cell.id not in positions:  # a tool that drops ids: the same source will do
                same = next((i for i, c in enumerate(submission.cells) if c.get("id") is None
                             and c.cell_type == "code" and c.source == cell.source), None)
                if same is not None:
                    submission.cells[same]["id"] = cell.id
                    positions[cell.id] = same
            if cell.id in positions:
                mine = submission.cells[positions[cell.id]]
                if (mine.cell_type != "code" or mine.source != cell.source
                        or mine.metadata.get("tags") != cell.metadata.get("tags")):
                    edited += 1
                submission.cells[positions[cell.id]] = copy.deepcopy(cell)
            else:
                edited += 1
                at = positions[previous_id] + 1 if previous_id in positions else len(
                    submission.cells)
                submission.cells.insert(at, copy.deepcopy(cell))
        previous_id = cell.id
    return edited


def _pristine(root: Path, lang: str, lab: str) -> nbformat.NotebookNode:
    return nbformat.read(root / "labs" / lang / f"{lab}.ipynb", as_version=4)


def _lang_of(nb: nbformat.NotebookNode) -> str:
    lang = nb.metadata.get("mcpkit", {}).get("lang")
    return lang if lang in src.LANGS else src.LANGS[0]


def nbval_args(files: list[str], junit: Path, *, rootdir: Path, ini: Path, lax: bool = True,
               timeout: int = 60, sanitize: Path | None = None) -> list[str]:
    """The pytest command line that runs nbval over ``files`` with a JUnit report.

    It ignores any pytest configuration around (``ini``, written empty if missing, stands
    in), so that a project's addopts cannot change how notebooks are graded.
    """
    if not ini.exists():
        ini.write_text("[pytest]\n")
    args = [
        sys.executable, "-m", "pytest", "-c", str(ini), "--rootdir", str(rootdir),
        "-p", "no:cacheprovider", "-q", "--color=no", "--nbval-lax" if lax else "--nbval",
        "--nbval-current-env", f"--nbval-cell-timeout={timeout}", f"--junitxml={junit}",
        "-o", "junit_family=xunit1",
    ]
    if sanitize is not None and sanitize.exists():
        args += ["--nbval-sanitize-with", str(sanitize)]
    return [*args, *files]


def nbval_env(ipdir: str) -> dict[str, str]:
    return dict(os.environ, IPYTHONDIR=ipdir, PYTHONDONTWRITEBYTECODE="1")


def parse_junit(path: Path) -> dict[tuple[str, int], tuple[str, str]]:
    """(notebook file, code cell index) -> (outcome, failure text) from nbval's JUnit XML.

    The outcome is passed, failure, error or skipped; the file is as pytest reports it,
    relative to the run's rootdir.
    """
    results: dict[tuple[str, int], tuple[str, str]] = {}
    if not path.exists():
        return results
    for case in ET.parse(path).getroot().iter("testcase"):
        m = re.fullmatch(r"Cell (\d+)", case.get("name", ""))
        if m is None:
            continue
        outcome, text = "passed", ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = tag
                text = _ANSI.sub("", (node.get("message") or "") + "\n" + (node.text or ""))
                break
        results[(case.get("file", ""), int(m.group(1)))] = (outcome, text)
    return results


def kernel_troubles(results: dict[tuple[str, int], tuple[str, str]]) -> set[str]:
    """Notebooks whose run failed because of the kernel (it died, never started, went mute)."""
    return {file for (file, _index), (outcome, text) in results.items()
            if outcome in ("failure", "error") and _KERNEL_TROUBLE.search(text)}


def rerun(results: dict[tuple[str, int], tuple[str, str]], files: set[str], junit: Path,
          run: Callable[[list[str], Path], None]) -> None:
    """Run ``files`` again (one process, one at a time) and replace their results."""
    if not files:
        return
    run(sorted(files), junit)
    for key in [k for k in results if k[0] in files]:
        del results[key]
    results.update(parse_junit(junit))


def _sources(nb: nbformat.NotebookNode, tag: str) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if c.cell_type == "code" and tag in c.metadata.get("tags", [])]


def part_jobs(nb: nbformat.NotebookNode, pristine: nbformat.NotebookNode, lab: str,
              lang: str, seed: int, scale: int) -> list[dict]:
    """One sandbox job per graded cell of ``pristine``, with the learner's exercise code.

    Exercise cells are found by the ids the pristine lab gives them, so retagging a cell
    changes nothing; setup and graded cells are the course's own.
    """
    from ..grading import OFF_LIMITS
    from ..grading.sandbox import import_bindings

    mine = learners_exercises(nb, pristine)
    setup = [(c.id, c.source) for c in _sources(pristine, "setup")]
    names: dict[str, str] = {}
    for _id, code in setup:
        names.update(import_bindings(code))
    off_limits = {module: sorted(found) for module, found in OFF_LIMITS.get(lab, {}).items()}
    stubs = {c.id: c.source for c in _sources(pristine, "exercise")}
    numbers = {cell: n for n, cell in enumerate(stubs, 1)}
    jobs: list[dict] = []
    exercises: list[tuple[str, str]] = []
    own: list[str] = []
    for c in pristine.cells:  # a graded cell sees the exercises above it, as in the notebook
        tags = c.metadata.get("tags", []) if c.cell_type == "code" else []
        if "exercise" in tags:
            exercises.append((c.id, mine.get(c.id, c.source)))
            own.append(c.id)
        elif "graded" in tags:
            jobs.append({"cell": c.id, "setup": setup, "exercises": list(exercises),
                         "graded": c.source, "lang": lang, "seed": seed, "scale": scale,
                         "setup_names": names, "off_limits": off_limits, "own": own,
                         "stubs": stubs, "numbers": numbers, "stubbed": []})
            own = []
    return jobs


def learners_exercises(nb: nbformat.NotebookNode,
                       pristine: nbformat.NotebookNode) -> dict[str, str]:
    """The learner's code for each of the pristine lab's exercise cells, by cell id.

    A cell keeps its id through JupyterLab, so the id decides. Some tools drop ids (Colab, an
    old Jupyter: nbformat 4.4 and below have none), and then every cell would read as
    unfilled: a code cell that carries no id the lab knows stands for the next exercise
    cell left when its first line is that cell's first line (the function's signature,
    kept as the lab gives it) or, failing that, when it is still tagged ``exercise``.
    """
    known = {c.id for c in pristine.cells}
    code = [c for c in nb.cells if c.cell_type == "code"]
    found = {c.id: c.source for c in code if c.get("id") in known}
    strangers = [c for c in code if c.get("id") not in known]
    start = 0
    for cell in _sources(pristine, "exercise"):
        if cell.id in found or not strangers:
            continue
        first = _first_line(cell.source)
        rest = strangers[start:]
        match = (next((i for i, c in enumerate(rest) if _first_line(c.source) == first), None)
                 if first else None)
        if match is None:
            match = next((i for i, c in enumerate(rest)
                          if "exercise" in c.metadata.get("tags", [])), None)
        if match is not None:
            found[cell.id] = rest[match].source
            start += match + 1
    return found


def _first_line(source: str) -> str:
    return next((line.strip() for line in source.splitlines() if line.strip()), "")


def run_part(job: dict, timeout: float, closed: tuple[str, ...] = ()) -> dict:
    """Run one job in a fresh ``python -I`` (no user site, no cwd on the path); a part that
    outlives ``timeout`` is killed and reported as timed out. When an earlier part's cell
    changed mcpkit at run time, the part runs again with that cell unfilled (it is flagged
    in its own part). ``closed``: folders the part's processes may not write, where the
    system can enforce it (:func:`closed_folders`, :mod:`mcpkit.course.confine`)."""
    job = dict(job, stubbed=list(job.get("stubbed", [])))
    for _attempt in range(len(job["exercises"]) + 1):
        answer = _run_once(job, timeout, closed)
        if answer["status"] != "rerun":
            return answer
        job["stubbed"] += answer["stub"]
    return {"status": "crashed", "passed": 0, "total": None, "problems": [],
            "report": _say(job, "reruns")}


def _run_once(job: dict, timeout: float, closed: tuple[str, ...] = ()) -> dict:
    token = secrets.token_hex(16)
    # -I: no user site-packages, no PYTHON* variables, no current directory on the path; the
    # mcpkit being graded with is put first, so a source checkout works as well as an install.
    start = (f"import sys; sys.path.insert(0, {str(_MCPKIT_HOME)!r}); "
             "from mcpkit.course.isolate import main; main()")
    # A session of its own: whatever the learner's code or the checks started (servers, their
    # children) is in its process group, and the whole group goes when the part is over.
    # Where it can, in namespaces of its own (mcpkit.course.confine): what the learner's
    # processes may write or leave running ends with the part.
    argv = confine.wrap([sys.executable, "-I", "-c", start], closed)
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=_sandbox_env(), start_new_session=True)
    try:
        out, _err = proc.communicate(json.dumps({**job, "token": token}), timeout=timeout)
    except subprocess.TimeoutExpired:
        _end_group(proc)
        return {"status": "timeout", "passed": 0, "total": None, "problems": [],
                "report": _say(job, "killed", seconds=timeout)}
    finally:
        _end_group(proc)
    for line in out.splitlines():
        if line.startswith(token + " "):
            return json.loads(line[len(token) + 1 :])
    return {"status": "crashed", "passed": 0, "total": None, "problems": [],
            "report": _say(job, "silent", code=proc.returncode)}


def _end_group(proc: subprocess.Popen) -> None:
    """Kill the sandbox's process group (it may have left children) and reap the sandbox."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone already
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not refused
        pass


_SAY = {
    "en": {"killed": "killed after {seconds:g} s",
           "silent": "the process ended ({code}) without an answer",
           "reruns": "too many exercise cells change mcpkit at run time"},
    "es": {"killed": "se detuvo tras {seconds:g} s",
           "silent": "el proceso terminó ({code}) sin dar respuesta",
           "reruns": "demasiadas celdas de ejercicio modifican mcpkit en tiempo de ejecución"},
}


def _say(job: dict, key: str, **values: object) -> str:
    return _SAY.get(job.get("lang", "en"), _SAY["en"])[key].format(**values)


_MCPKIT_HOME = Path(__file__).resolve().parents[2]


def closed_folders(root: Path) -> tuple[str, ...]:
    """What a part may not write: what holds mcpkit (a checkout or site-packages), Python,
    and the course being graded."""
    return confine.folders((_MCPKIT_HOME, sys.prefix, sys.base_prefix, root))


def _sandbox_env() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "SYSTEMROOT", "TMPDIR")
    return {k: v for k, v in os.environ.items() if k in keep} | {"PYTHONHASHSEED": "0"}


def grade(submissions: Path, root: Path, junit: Path | None = None, jobs: int | None = None,
          timeout: int = 60, seed: int | None = None, scale: int | None = None,
          deadline: datetime | None = None) -> list[Row]:
    """Grade every submission; return one row per learner and lab.

    Each graded cell runs in a sandbox process of its own (:mod:`mcpkit.course.isolate`),
    with ``seed`` (random when not given, the same for the whole class) and ``scale`` times
    the notebook's generated cases. ``SUBMISSIONS`` is a folder of ``<learner>/<lab>.ipynb``
    or an exchange folder (:mod:`mcpkit.course.exchange`: the latest hand-in is graded, and
    with ``deadline`` marked late or not).
    """
    from .exchange import latest

    labs = {p.stem for p in (root / "labs" / src.LANGS[0]).glob("*.ipynb")}
    if not labs:
        raise FileNotFoundError(f"no lab notebooks under {root / 'labs'}; run mcpkit-course build")
    if seed is None:
        seed = secrets.randbelow(2**31)
    if scale is None:
        scale = HIDDEN_SCALE
    found = latest(Path(submissions), labs)
    assignment = sorted({lab for mine in found.values() for lab in mine})
    rows: list[Row] = []
    work: list[tuple[Row, Graded, dict]] = []
    for learner, mine in found.items():
        for lab in assignment:
            row = Row(learner, lab, seed=seed)
            rows.append(row)
            pristine_en = _pristine(root, src.LANGS[0], lab)
            graded_en = [c for c in pristine_en.cells if _is_graded(c)]
            row.checks_total = sum(_expected_total(c) for c in graded_en)
            row.max_points = sum(_points(c) for c in graded_en)
            if lab not in mine:
                continue
            row.submitted = mine[lab].at
            if deadline is not None and row.submitted is not None:
                row.late = row.submitted > deadline
            try:
                nb = nbformat.read(mine[lab].path, as_version=4)
            except Exception as exc:  # not JSON, not a notebook: nothing to run
                print(f"warning: cannot read {mine[lab].path}: {exc}", file=sys.stderr)
                row.status = "unreadable"
                continue
            row.lang = _lang_of(nb)
            pristine = _pristine(root, row.lang, lab)
            row.edited_graded_cells = restore(copy.deepcopy(nb), pristine)
            row.graded = [Graded(c.id, i, _points(c), _expected_total(c))
                          for i, c in enumerate(_sources(pristine, "graded"))]
            for g, job in zip(row.graded, part_jobs(nb, pristine, lab, row.lang, seed, scale),
                              strict=True):
                work.append((row, g, job))

    workers = max(1, min(jobs or os.cpu_count() or 1, len(work) or 1))
    closed = closed_folders(root)
    intact = _digest(root)
    changed_by: list[str] = []

    def run(item: tuple[Row, Graded, dict]) -> dict:
        if changed_by:  # grading stops: what runs now would run with changed files
            return {"status": "crashed", "passed": 0, "total": None, "report": ""}
        answer = run_part(item[2], timeout, closed)
        if _digest(root) != intact:
            changed_by.append(f"{item[0].learner}/{item[0].lab} ({item[1].cell_id})")
        return answer

    with ThreadPoolExecutor(max_workers=workers) as pool:
        answers = list(pool.map(run, work))
    if changed_by:
        raise GraderChanged(
            f"grading stopped: mcpkit's files or the pristine labs changed while "
            f"{', '.join(changed_by)} ran (with another part at the same time, it may be "
            f"that one). Restore them (git checkout, or reinstall mcpkit) and grade again.")
    for (_row, g, _job), answer in zip(work, answers, strict=True):
        settle(g, answer)
    for row in rows:
        if not row.graded:
            continue
        row.checks_passed = sum(g.passed for g in row.graded)
        row.points = round(sum(g.points * g.passed / g.total for g in row.graded if g.total), 2)
        row.status = ("flagged" if any(g.status == "flagged" for g in row.graded)
                      else "passed" if row.checks_passed == row.checks_total else "failed")
    if junit is not None:
        write_junit(rows, Path(junit))
    return rows


def settle(g: Graded, answer: dict) -> None:
    """Take one part's answer from its sandbox. A record that does not add up (more checks
    passed than ran, or another count than the cell runs) was not written by honest checks:
    the part scores nothing, as a crash does, and its report says what came back."""
    g.status = answer["status"]
    g.report = answer.get("report") or ""
    g.problems = answer.get("problems") or []
    g.passed = int(answer.get("passed") or 0)
    ran = answer.get("total")
    if ran is not None and g.passed > 0 and (g.passed > ran or ran != g.total):
        g.status = "crashed"
        g.report = f"{g.passed}/{ran} ≠ {g.total}?\n{g.report}"
    if g.status in ("timeout", "crashed", "flagged"):
        g.passed = 0


class GraderChanged(RuntimeError):
    """A part changed the grader's own files: no grade of this run can be trusted."""


def _digest(root: Path) -> str:
    """One hash of mcpkit's modules and the pristine labs, the files every part is run with."""
    digest = hashlib.sha256()
    for path in sorted([*(_MCPKIT_HOME / "mcpkit").rglob("*.py"),
                        *(root / "labs").rglob("*.ipynb")]):
        digest.update(str(path).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def write_junit(rows: list[Row], path: Path) -> None:
    """One <testsuite> per learner and lab, one <testcase> per graded cell (named by id)."""
    suites = ET.Element("testsuites", name="mcpkit-course grade")
    for row in rows:
        suite = ET.SubElement(suites, "testsuite", name=f"{row.learner}/{row.lab}")
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="hidden seed", value=str(row.seed))
        failures = 0
        for g in row.graded:
            case = ET.SubElement(suite, "testcase", classname=f"{row.learner}.{row.lab}",
                                 name=f"{g.cell_id} [{g.status}: {g.passed}/{g.total}]")
            if g.status == "passed":
                continue
            failures += 1
            first = (g.problems[:1] or g.report.strip().splitlines()[:1] or [g.status])[0]
            ET.SubElement(case, "failure", message=f"{g.status}: {first}").text = "\n".join(
                [*g.problems, g.report])
        if row.status in ("missing", "unreadable"):
            case = ET.SubElement(suite, "testcase", classname=f"{row.learner}.{row.lab}",
                                 name=row.status)
            ET.SubElement(case, "failure", message=row.status)
            failures += 1
        suite.set("tests", str(len(suite) - 1))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
    ET.indent(suites)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def write_csv(rows: list[Row], path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(row.as_csv() | {"learner": as_text(row.learner)} for row in rows)


def as_text(cell: str) -> str:
    """A CSV cell a spreadsheet shows as text: a learner's folder (or hub) name that starts
    like a formula (= + - @, a tab or a carriage return) would otherwise run as one when the
    instructor opens the file, so it gets a leading apostrophe (OWASP's advice)."""
    return "'" + cell if cell[:1] in ("=", "+", "-", "@", "\t", "\r") else cell


# --------------------------------------------------------------------------- one learner


@dataclass
class Part:
    """One graded part of a learner's own lab, as ``./course.sh grade`` reports it."""

    name: str  # the heading of the lab section the graded cell closes ("Part 1 · Encoders")
    graded: Graded

    @property
    def earned(self) -> float:
        g = self.graded
        return g.points * g.passed / g.total if g.total else 0.0


def part_names(nb: nbformat.NotebookNode) -> dict[str, str]:
    """graded cell id -> the last ``## `` heading above it (its part's title)."""
    names: dict[str, str] = {}
    heading = ""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("## "):
                    heading = line[3:].strip().replace("`", "")
        elif _is_graded(cell):
            names[cell.id] = heading or cell.id
    return names


def check_one(path: Path, root: Path, timeout: int = 60,
              nb: nbformat.NotebookNode | None = None,
              every_detail: bool = False) -> tuple[str, list[Part]]:
    """Grade one learner's lab the way the class grader does (exercise code only, each part
    in its own sandbox process), with the notebook's own seed and cases.

    Returns the language read from the notebook and one :class:`Part` per graded cell.
    Setup and demo cells are not parts: only graded cells score, so a demo cell that was
    never run costs nothing. A file that is no longer a notebook raises
    :class:`~mcpkit.course.workspace.Unreadable`. ``nb``: the notebook, when the caller has
    read it already. ``every_detail``: every failing check's details, not only the first
    few a graded cell prints (for ``--all``).
    """
    from .workspace import read_copy

    if nb is None:
        nb = read_copy(path)
    lang = _lang_of(nb)
    # The lab the notebook says it is, else the one its file name says; a stem only, so that
    # metadata cannot point the grader at a file outside the course's labs.
    said = nb.metadata.get("mcpkit", {}).get("source", "")
    named = [Path(said).stem] if isinstance(said, str) and said else []
    lab = next((stem for stem in [*named, Path(path).stem]
                if (root / "labs" / lang / f"{stem}.ipynb").is_file()), None)
    if lab is None:
        raise FileNotFoundError(
            f"{path}: not one of this course's labs (its name and its metadata name no lab "
            f"under {root / 'labs'}) / no es uno de los laboratorios del curso (ni su nombre "
            f"ni sus metadatos nombran un laboratorio de {root / 'labs'})")
    pristine = _pristine(root, lang, lab)
    names = part_names(pristine)
    parts = [Part(names[c.id], Graded(c.id, i, _points(c), _expected_total(c)))
             for i, c in enumerate(_sources(pristine, "graded"))]
    jobs = part_jobs(nb, pristine, lab, lang, seed=None, scale=1)  # type: ignore[arg-type]
    if every_detail:
        jobs = [dict(job, every_detail=True) for job in jobs]
    with ThreadPoolExecutor(max_workers=min(2, len(jobs) or 1)) as pool:
        closed = closed_folders(root)
        answers = list(pool.map(lambda job: run_part(job, timeout, closed), jobs))
    for part, answer in zip(parts, answers, strict=True):
        settle(part.graded, answer)
    return lang, parts


_WORDS = {
    "en": {"score": "score", "points": "points", "checks": "checks", "timeout": "timed out",
           "crashed": "crashed", "flagged": "flagged: this part scores 0, because",
           "not_started": "not started yet",
           "timeout_hint": "hint:     a loop that never ends, or a call that waits for ever "
                           "(a read, a join, a sleep) in your code",
           "more": "{n} more failing: {names} — --all shows every failing check",
           "see": "run its graded cell in the notebook for the full report"},
    "es": {"score": "nota", "points": "puntos", "checks": "comprobaciones",
           "timeout": "se agotó el tiempo de espera", "crashed": "caída del proceso",
           "flagged": "marcada: esta parte obtiene 0, porque",
           "not_started": "sin empezar",
           "timeout_hint": "pista:    un bucle que nunca termina, o una llamada que espera "
                           "para siempre (una lectura, un join, un sleep) en tu código",
           "more": "fallan {n} más: {names} — --all muestra todas las comprobaciones "
                   "fallidas",
           "see": "ejecuta su celda calificada en el cuaderno para ver el informe completo"},
}


@dataclass
class Check:
    """One check as a report lists it: its name, whether it passed, and its detail lines."""

    name: str
    ok: bool
    details: list[str] = field(default_factory=list)

    @property
    def generated(self) -> bool:
        return bool(self.details) and ("reference" in self.details[0]
                                       or "referencia" in self.details[0])


def parse_report(report: str) -> tuple[list[str], list[Check]]:
    """A graded cell's report -> (the lines before its summary line, its checks)."""
    before: list[str] = []
    checks: list[Check] = []
    summary = False
    for line in report.splitlines():
        if not line.strip():
            continue
        if not summary:
            if re.match(r"[✓✗] \d+/\d+ ", line):
                summary = True
            else:
                before.append(line.strip())
            continue
        if m := re.match(r"  ([✓✗]) (.*)", line):
            checks.append(Check(m.group(2), m.group(1) == "✓"))
        elif line.startswith("      ") and checks:
            checks[-1].details.append(line[6:])
    return before, checks


def _most_specific(failed: list[Check]) -> list[Check]:
    """Failing checks, the one to show first at the front: a hand-written check (it names one
    behaviour and has its own hint) before a generated one, each in report order."""
    detailed = [c for c in failed if c.details]
    return sorted(detailed, key=lambda c: c.generated) + [c for c in failed if not c.details]


def format_parts(lab: str, lang: str, parts: list[Part], show_all: bool = False) -> str:
    """The learner's score sheet: one line per part (name, points, checks); under a part that
    lost points, why: the most specific failing check with every field (or, with
    ``show_all``, every failing check), a flag's reasons, a time-out's likely cause."""
    w = _WORDS[lang]
    width = max((len(p.name) for p in parts), default=0)
    lines = []
    for p in parts:
        g = p.graded
        mark = "✓" if g.status == "passed" and g.passed == g.total else "✗"
        lines.append(f"{mark} {p.name:<{width}}  {p.earned:4.1f}/{g.points:g} {w['points']}"
                     f"  ({g.passed}/{g.total} {w['checks']})")
        if mark == "✓":
            continue
        before, checks = parse_report(g.report)
        if g.status == "flagged":
            lines.append(f"    ⚑ {w['flagged']}:")
            lines += [f"      - {problem}" for problem in g.problems]
            continue
        if g.status == "timeout":
            lines += [f"    {w['timeout']}: {g.report.strip()}", f"    {w['timeout_hint']}"]
            continue
        lines += [f"    {ln}" for ln in before]  # notes, and errors raised by your cells
        if g.status == "crashed" and not checks:
            lines.append(f"    {w['crashed']}: {g.report.strip()[-600:]}")
            continue
        failed = [c for c in checks if not c.ok]
        if failed and "NotImplementedError" in g.report and not any(c.details for c in failed):
            lines.append(f"    {w['not_started']}")
            continue
        ordered = _most_specific(failed)
        shown = ordered if show_all else ordered[:1]
        for check in shown:
            lines.append(f"    ✗ {check.name}")
            lines += [f"        {d}" for d in check.details]
        rest = [c.name for c in ordered[len(shown):]]
        if rest:
            lines.append("    (" + w["more"].format(n=len(rest), names="; ".join(rest)) + ")")
        if not shown:
            lines.append(f"    ({w['see']})")
    earned = sum(p.earned for p in parts)
    total = sum(p.graded.points for p in parts)
    lines.append(f"{w['score'].capitalize()}: {earned:.1f}/{total:g} {w['points']}  ({lab})")
    return "\n".join(lines)

