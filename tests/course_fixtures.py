"""The course's test fixtures: plausible wrong answers and attempts to game the grader.

``tests/fixtures/course/<lab>.<kind>.wrong.py`` is a wrong answer: header comments say which
graded cells must fail (``# graded-fails: 3`` or ``3,4``, 1-based) and what their report must
contain (``# expect-en: text``, ``# expect-es: texto``, one or more of each). Then sections
change the solution's exercise cells (numbered from 1 in lab order):

* ``# %% exercise N`` followed by code: the whole cell;
* ``# %% exercise N replace``, the text to find, ``# %% with``, its replacement: an edit
  (several may follow each other).

``<lab>.<kind>.gaming.py`` is an attempt to game class grading. Its header says which graded
cells must score zero (``# zero: 3``) or exactly what the same exercise code scores without
the gaming (``# same-as-honest: 3``); the others must get full marks. It may change the
notebook: ``# notebook: es`` (start from the Spanish lab), ``# lang: es`` (set_language and
metadata disagree), ``# lang: none`` (metadata lost), ``# outputs: fake`` (every graded
cell's saved output is a success line), ``# retag: N`` (graded cell N loses its tags).
Sections are as above, plus ``# %% exercise N stub`` (the unfilled exercise), ``# %% before
graded N`` (a new learner cell just above graded cell N) and ``# %% graded N`` (graded cell
N's source rewritten; its saved output says it passed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "course"
_SECTION = re.compile(r"^# %% (exercise \d+(?: replace| stub)?|with|before graded \d+|graded \d+)"
                      r"\n", re.MULTILINE)


@dataclass
class Fixture:
    path: Path
    lab: str
    graded_fails: list[int] = field(default_factory=list)
    zero: list[int] = field(default_factory=list)
    same_as_honest: list[int] = field(default_factory=list)
    expect: dict[str, list[str]] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    exercises: dict[int, str] = field(default_factory=dict)  # whole cells
    edits: list[tuple[int, str, str]] = field(default_factory=list)
    stubs: list[int] = field(default_factory=list)
    before_graded: dict[int, str] = field(default_factory=dict)
    graded: dict[int, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.name.removesuffix(".py")


def _numbers(text: str) -> list[int]:
    return [int(n) for n in text.split(",") if n.strip()]


def load(path: Path) -> Fixture:
    text = path.read_text(encoding="utf-8")
    head, *parts = _SECTION.split(text)
    fixture = Fixture(path, path.name.split(".")[0])
    for line in head.splitlines():
        if m := re.match(r"# graded-fails: (.*)", line):
            fixture.graded_fails = _numbers(m.group(1))
        elif m := re.match(r"# zero:(.*)", line):
            fixture.zero = _numbers(m.group(1))
        elif m := re.match(r"# same-as-honest: (.*)", line):
            fixture.same_as_honest = _numbers(m.group(1))
        elif m := re.match(r"# expect-(\w+): (.*)", line):
            fixture.expect.setdefault(m.group(1), []).append(m.group(2))
        elif m := re.match(r"# (lang|outputs|retag|notebook): (.*)", line):
            fixture.options[m.group(1)] = m.group(2).strip()
    pending: tuple[int, str] | None = None
    for marker, body in zip(parts[::2], parts[1::2], strict=True):
        body = body.strip("\n")
        number = int(re.findall(r"\d+", marker)[0]) if re.search(r"\d", marker) else 0
        if marker.endswith(" replace"):
            pending = (number, body)
        elif marker == "with":
            assert pending, f"{path.name}: '# %% with' without '# %% exercise N replace'"
            fixture.edits.append((pending[0], pending[1], body))
            pending = None
        elif marker.endswith(" stub"):
            fixture.stubs.append(number)
        elif marker.startswith("exercise"):
            fixture.exercises[number] = body
        elif marker.startswith("before graded"):
            fixture.before_graded[number] = body
        else:
            fixture.graded[number] = body
    return fixture


def wrong_fixtures(lab: str = "*") -> list[Fixture]:
    """``<lab>.wrong.py`` (the one the nbval tests also run) and ``<lab>.<kind>.wrong.py``."""
    paths = {*FIXTURES.glob(f"{lab}.wrong.py"), *FIXTURES.glob(f"{lab}.*.wrong.py")}
    return [load(p) for p in sorted(paths)]


def gaming_fixtures() -> list[Fixture]:
    return [load(p) for p in sorted(FIXTURES.glob("*.gaming.py"))]


def tags(cell) -> list[str]:
    return cell.metadata.get("tags", [])


def exercise_code(fixture: Fixture, lang: str) -> dict[int, str]:
    """Exercise number -> the code this fixture hands in (the solution where it says nothing)."""
    solution = nbformat.read(ROOT / "solutions" / lang / f"{fixture.lab}.ipynb", as_version=4)
    stub = nbformat.read(ROOT / "labs" / lang / f"{fixture.lab}.ipynb", as_version=4)
    solved = [c.source for c in solution.cells if "exercise" in tags(c)]
    unfilled = [c.source for c in stub.cells if "exercise" in tags(c)]
    code = dict(enumerate(solved, 1))
    code.update(fixture.exercises)
    for n in fixture.stubs:
        code[n] = unfilled[n - 1]
    for n, old, new in fixture.edits:
        assert old in code[n], f"{fixture.name}: exercise {n} has no {old!r}"
        code[n] = code[n].replace(old, new)
    return code


def honest(fixture: Fixture) -> Fixture:
    """The same exercise code with the gaming taken out."""
    return Fixture(fixture.path, fixture.lab, exercises=fixture.exercises, edits=fixture.edits,
                   stubs=fixture.stubs, options={"notebook": fixture.options.get("notebook", "en")})


def notebook(fixture: Fixture, lang: str) -> nbformat.NotebookNode:
    """The lab as this learner hands it in."""
    nb = nbformat.read(ROOT / "labs" / lang / f"{fixture.lab}.ipynb", as_version=4)
    code = exercise_code(fixture, lang)
    exercises = [c for c in nb.cells if "exercise" in tags(c)]
    for n, cell in enumerate(exercises, 1):
        cell.source = code[n]
    graded = [c for c in nb.cells if "graded" in tags(c)]
    for n, source in fixture.graded.items():
        graded[n - 1].source = source
        graded[n - 1].outputs = [nbformat.v4.new_output(
            "stream", name="stdout", text="✓ 99/99 checks passed\n")]
    if fixture.options.get("outputs") == "fake":
        for cell in graded:
            total = cell.metadata["mcpkit"]["checks"]
            cell.execution_count = 1
            cell.outputs = [nbformat.v4.new_output(
                "stream", name="stdout", text=f"✓ {total}/{total} checks passed\n")]
    if "retag" in fixture.options:
        graded[int(fixture.options["retag"]) - 1].metadata["tags"] = []
    for n, source in sorted(fixture.before_graded.items(), reverse=True):
        at = nb.cells.index(graded[n - 1])
        nb.cells.insert(at, nbformat.v4.new_code_cell(source))
    lang_option = fixture.options.get("lang")
    if lang_option == "none":
        nb.metadata.pop("mcpkit", None)
    elif lang_option:
        for cell in nb.cells:
            if "setup" in tags(cell):
                cell.source = re.sub(r'set_language\("\w+"\)', f'set_language("{lang_option}")',
                                     cell.source)
    return nb


# --------------------------------------------------------------------------- running them

SOLVED = {"status": "passed", "passed": None, "total": None, "report": "", "problems": []}


def run_parts(nb, lab: str, lang: str, seed=None, scale=1, solved_pass: bool = False
              ) -> list[dict]:
    """Every graded part of ``nb``, through the class grader's own job runner, in this
    process (the notebook's seed unless told): what the sandbox would answer.

    ``solved_pass``: a part whose exercise cells are all the solution's, at the notebook's
    seed, is not run again: the solution passes there (the nbval run of every lab filled with
    its solution, both languages, proves it), and the same code, seed and checks give the
    same verdict. A wrong answer then costs only the parts its own edits reach."""
    from mcpkit import grading
    from mcpkit.course import grade as course_grade
    from mcpkit.course import isolate
    from mcpkit.grading import core

    pristine = nbformat.read(ROOT / "labs" / lang / f"{lab}.ipynb", as_version=4)
    solution = {c.id: c.source for c in nbformat.read(
        ROOT / "solutions" / lang / f"{lab}.ipynb", as_version=4).cells
        if "exercise" in tags(c)}

    def solved(job: dict) -> bool:
        return (solved_pass and seed is None and scale == 1
                and all(solution.get(cell) == code for cell, code in job["exercises"]))

    try:
        return [SOLVED if solved(job) else isolate.run_job(job)
                for job in course_grade.part_jobs(nb, pristine, lab, lang, seed, scale)]
    finally:
        core.configure()
        grading.set_language("en")


def wrong_answer_parts(path: str, lang: str) -> list[dict]:
    """What the class grader's job runner answers for a wrong-answer fixture (the notebook's
    seed), its unchanged parts taken as passed (see :func:`run_parts`)."""
    fixture = load(Path(path))
    return run_parts(notebook(fixture, lang), fixture.lab, lang, solved_pass=True)


def solution_parts(lab: str, seed: int) -> list[dict]:
    nb = nbformat.read(ROOT / "solutions" / "en" / f"{lab}.ipynb", as_version=4)
    return run_parts(nb, lab, "en", seed=seed)


def call(function, *args):
    """``function(*args)``: lets one pool run calls of several functions."""
    return function(*args)


def in_workers(function, calls: list[tuple], workers: int | None = None) -> list:
    """``function(*call)`` for every call, in a few worker processes of their own (started
    fresh, not forked from pytest): checks spend much of their time waiting on real server
    processes and time limits, so several at once finish sooner on any number of cores. A
    call that raised gives its exception in its place."""
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    workers = workers or (os.cpu_count() or 1) + 1
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(workers, len(calls) or 1),
                             mp_context=context) as pool:
        futures = [pool.submit(function, *call) for call in calls]
        results = []
        for future in futures:
            try:
                results.append(future.result(timeout=1800))
            except Exception as exc:  # noqa: BLE001 - reported by the test that reads it
                results.append(exc)
        return results
