"""Grade a folder of lab submissions with nbval, and write a CSV and a JUnit XML report.

Layout of the folder (one sub-folder per learner, lab files named as in ``labs/``)::

    SUBMISSIONS/
        ana/lab01_framing.ipynb
        ana/lab02_jsonrpc.ipynb
        bruno/lab01_framing.ipynb

Theory of operation
-------------------
A learner's notebook is not trusted: its graded cells may have been edited and its saved
outputs say nothing. So each submission is first *restored*: every graded cell (matched by
cell id) is replaced with the pristine cell from ``labs/<lang>/`` of this course, expected
output included, and a graded cell the learner deleted is put back in its place. The language
comes from the notebook's metadata. The restored copies go to a temporary folder, and nbval
runs over them in lax mode (only graded cells' outputs are compared; any exception fails its
cell) in ``jobs`` pytest subprocesses, with a per-cell timeout and the course's IPython profile.

Each graded cell's checker prints ``✓ N/N ...`` or raises with ``✗ k/N ...``, so the JUnit
report of a run says how many checks passed in every graded cell. A graded cell is worth the
``points`` of its source; it earns them in proportion to the checks that passed.
"""

from __future__ import annotations

import copy
import csv
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import source as src
from .build import ipython_dir

CSV_FIELDS = ("learner", "lab", "lang", "status", "checks_passed", "checks_total", "points",
              "max_points", "edited_graded_cells")
_SUMMARY = re.compile(r"^[✓✗] (\d+)/(\d+) ", re.MULTILINE)
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
    workdir_name: str = ""  # where the restored copy was graded

    def as_csv(self) -> dict[str, object]:
        return {
            "learner": self.learner, "lab": self.lab, "lang": self.lang, "status": self.status,
            "checks_passed": self.checks_passed, "checks_total": self.checks_total,
            "points": f"{self.points:.2f}", "max_points": f"{self.max_points:g}",
            "edited_graded_cells": self.edited_graded_cells,
        }


def _is_graded(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and "graded" in cell.metadata.get("tags", [])


def _expected_total(cell: nbformat.NotebookNode) -> int:
    text = "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")
    m = _SUMMARY.search(text)
    if m is None:
        raise ValueError(f"graded cell {cell.id} has no expected ✓ line")
    return int(m.group(2))


def _points(cell: nbformat.NotebookNode) -> float:
    return float(cell.metadata.get("mcpkit", {}).get("points", 1))


def restore(submission: nbformat.NotebookNode, pristine: nbformat.NotebookNode) -> int:
    """Put the pristine graded cells into ``submission``; return how many had been edited."""
    edited = 0
    previous_id: str | None = None
    for cell in pristine.cells:
        if _is_graded(cell):
            positions = {c.get("id"): i for i, c in enumerate(submission.cells)}
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


def _graded_cells(nb: nbformat.NotebookNode, pristine: nbformat.NotebookNode) -> list[Graded]:
    expected = {c.id: c for c in pristine.cells if _is_graded(c)}
    found: list[Graded] = []
    code_index = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if cell.get("id") in expected:
            p = expected[cell.id]
            found.append(Graded(cell.id, code_index, _points(p), _expected_total(p)))
        code_index += 1
    return found


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


def discover(submissions: Path, labs: set[str]) -> dict[str, dict[str, Path]]:
    """learner -> lab -> notebook path, for ``SUBMISSIONS/<learner>/<lab>.ipynb``."""
    found: dict[str, dict[str, Path]] = {}
    for learner_dir in sorted(p for p in submissions.iterdir() if p.is_dir()):
        if learner_dir.name.startswith("."):
            continue
        mine = found.setdefault(learner_dir.name, {})
        for path in sorted(learner_dir.glob("*.ipynb")):
            if path.stem in labs:
                mine[path.stem] = path
            else:
                print(f"warning: ignoring {path} (not a lab of this course)", file=sys.stderr)
    return found


def grade(submissions: Path, root: Path, junit: Path | None = None, jobs: int | None = None,
          timeout: int = 60) -> list[Row]:
    """Grade every submission; return one row per learner and lab."""
    labs = {p.stem for p in (root / "labs" / src.LANGS[0]).glob("*.ipynb")}
    if not labs:
        raise FileNotFoundError(f"no lab notebooks under {root / 'labs'}; run mcpkit-course build")
    found = discover(Path(submissions), labs)
    assignment = sorted({lab for mine in found.values() for lab in mine})
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="mcpkit-grade-") as tmp, ipython_dir(root) as ipdir:
        workdir = Path(tmp)
        to_run: list[Row] = []
        for learner, mine in found.items():
            for lab in assignment:
                row = Row(learner, lab)
                rows.append(row)
                pristine_en = _pristine(root, src.LANGS[0], lab)
                graded_en = [c for c in pristine_en.cells if _is_graded(c)]
                row.checks_total = sum(_expected_total(c) for c in graded_en)
                row.max_points = sum(_points(c) for c in graded_en)
                if lab not in mine:
                    continue
                try:
                    nb = nbformat.read(mine[lab], as_version=4)
                except Exception as exc:  # not JSON, not a notebook: nothing to run
                    print(f"warning: cannot read {mine[lab]}: {exc}", file=sys.stderr)
                    row.status = "unreadable"
                    continue
                row.lang = _lang_of(nb)
                pristine = _pristine(root, row.lang, lab)
                row.edited_graded_cells = restore(nb, pristine)
                row.graded = _graded_cells(nb, pristine)
                row.workdir_name = f"s{len(to_run):04d}/{lab}.ipynb"
                (workdir / row.workdir_name).parent.mkdir()
                nbformat.write(nb, workdir / row.workdir_name)
                to_run.append(row)

        parallel = max(1, min(jobs or os.cpu_count() or 1, len(to_run)))
        chunks = [to_run[i::parallel] for i in range(parallel)] if to_run else []
        procs = [
            subprocess.Popen(
                nbval_args([r.workdir_name for r in chunk], workdir / f"junit-{i}.xml",
                           rootdir=workdir, ini=workdir / "pytest.ini", timeout=timeout,
                           sanitize=root / "course" / "sanitize.cfg"),
                cwd=workdir, env=nbval_env(ipdir),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for i, chunk in enumerate(chunks)
        ]
        for proc in procs:
            proc.wait()
        results: dict[tuple[str, int], tuple[str, str]] = {}
        for i in range(len(chunks)):
            results.update(parse_junit(workdir / f"junit-{i}.xml"))

        def run_serially(files: list[str], report: Path) -> None:
            subprocess.run(
                nbval_args(files, report, rootdir=workdir, ini=workdir / "pytest.ini",
                           timeout=timeout, sanitize=root / "course" / "sanitize.cfg"),
                cwd=workdir, env=nbval_env(ipdir),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)

        rerun(results, kernel_troubles(results), workdir / "junit-retry.xml", run_serially)

        for row in to_run:
            for g in row.graded:
                outcome, text = results.get((row.workdir_name, g.code_index), ("error", ""))
                if outcome == "passed":
                    g.passed = g.total
                else:
                    m = _SUMMARY.search(text)
                    g.passed = min(int(m.group(1)), g.total) if m else 0
            row.checks_total = sum(g.total for g in row.graded)
            row.checks_passed = sum(g.passed for g in row.graded)
            row.max_points = sum(g.points for g in row.graded)
            row.points = round(sum(g.points * g.passed / g.total for g in row.graded if g.total),
                               2)
            row.status = "passed" if row.checks_passed == row.checks_total else "failed"
        if junit is not None:
            write_junit(rows, results, Path(junit))
    return rows


def write_junit(rows: list[Row], results: dict[tuple[str, int], tuple[str, str]],
                path: Path) -> None:
    """One <testsuite> per learner and lab; graded cells are named after their cell id."""
    suites = ET.Element("testsuites", name="mcpkit-course grade")
    for row in rows:
        suite = ET.SubElement(suites, "testsuite", name=f"{row.learner}/{row.lab}")
        cases = sorted(((i, c) for (f, i), c in results.items() if f == row.workdir_name),
                       key=lambda item: item[0])
        graded = {g.code_index: g for g in row.graded}
        failures = 0
        for index, (outcome, text) in cases:
            name = f"Cell {index}"
            summary = text.strip().split("\n")[0]
            if index in graded:
                g = graded[index]
                name += f" [graded {g.cell_id}: {g.passed}/{g.total}]"
                m = _SUMMARY.search(text)
                summary = m.group(0) + text[m.end():].split("\n")[0] if m else summary
            case = ET.SubElement(suite, "testcase", classname=f"{row.learner}.{row.lab}",
                                 name=name)
            if outcome in ("failure", "error"):
                failures += 1
                ET.SubElement(case, "failure", message=summary).text = text
            elif outcome == "skipped":
                ET.SubElement(case, "skipped")
        if row.status in ("missing", "unreadable"):
            case = ET.SubElement(suite, "testcase", classname=f"{row.learner}.{row.lab}",
                                 name=row.status)
            ET.SubElement(case, "failure", message=row.status)
            failures += 1
        suite.set("tests", str(len(suite)))
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
        writer.writerows(row.as_csv() for row in rows)
