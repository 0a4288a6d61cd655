"""The course notebooks under nbval, the way learners and instructors run them.

- every lesson and every solution passes ``pytest --nbval`` (strict: outputs compared);
- every unfilled lab fails, in its graded cells, saying the code is not written yet;
- a lab filled with the solution passes; filled with a plausible wrong answer (a fixture per
  lab under tests/fixtures/course/) it fails in the intended graded cell with the intended
  message, in both languages;
- ``grade`` turns a folder of three learners (right, wrong, tampered) into the expected CSV,
  and no attempt to game it (a fixture per kind) earns a point.

nbval runs in subprocesses (two at a time) over many notebooks at once: one kernel start per
notebook is the cost that matters, not pytest's.
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbval")
nbclient = pytest.importorskip("nbclient")

from mcpkit.course import build as course_build  # noqa: E402
from mcpkit.course import grade as course_grade  # noqa: E402
from mcpkit.course import source as src  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# Lesson and lab 09 run the npm reference servers: install them first (see conftest.node).
pytestmark = pytest.mark.usefixtures("node")
FIXTURES = ROOT / "tests" / "fixtures" / "course"
LABS = sorted(p.stem for p in (ROOT / "labs" / "en").glob("*.ipynb"))
LESSONS = sorted(p.stem for p in (ROOT / "notebooks" / "en").glob("*.ipynb"))


# --------------------------------------------------------------------------- helpers


@dataclass
class Wrong:
    """A plausible wrong answer: exercise code, and how the lab must fail with it."""

    overrides: dict[int, str]
    graded_fails: list[int]
    expect: dict[str, list[str]] = field(default_factory=dict)


def load_wrong(lab: str) -> Wrong:
    """Read tests/fixtures/course/<lab>.wrong.py.

    Header comments: ``# graded-fails: N`` (1-based graded cells that must fail) and
    ``# expect-<lang>: text`` (text their report must contain). Then ``# %% exercise N``
    sections replace the code of the N-th exercise cell; the others get the solution.
    """
    text = (FIXTURES / f"{lab}.wrong.py").read_text(encoding="utf-8")
    head, *sections = re.split(r"^# %% exercise (\d+)\n", text, flags=re.MULTILINE)
    wrong = Wrong({int(n): code.strip("\n") for n, code in zip(sections[::2], sections[1::2],
                                                               strict=True)}, [])
    for line in head.splitlines():
        if m := re.match(r"# graded-fails: (.*)", line):
            wrong.graded_fails = [int(n) for n in m.group(1).split(",")]
        elif m := re.match(r"# expect-(\w+): (.*)", line):
            wrong.expect.setdefault(m.group(1), []).append(m.group(2))
    return wrong


def tags(cell) -> list[str]:
    return cell.metadata.get("tags", [])


def fill(lab: str, lang: str, overrides: dict[int, str] | None = None):
    """The lab as a learner would hand it in: exercises filled with the solution's code,
    except those in ``overrides`` (exercise number -> code)."""
    nb = nbformat.read(ROOT / "labs" / lang / f"{lab}.ipynb", as_version=4)
    solution = {c.id: c for c in nbformat.read(ROOT / "solutions" / lang / f"{lab}.ipynb",
                                               as_version=4).cells}
    exercises = [c for c in nb.cells if "exercise" in tags(c)]
    for number, cell in enumerate(exercises, 1):
        cell.source = (overrides or {}).get(number, solution[cell.id].source)
    return nb


def graded_indexes(nb) -> list[int]:
    """nbval's "Cell N" of each graded cell (N counts code cells from 0)."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    return [i for i, c in enumerate(code) if "graded" in tags(c)]


def code_cell_count(path: Path) -> int:
    return sum(c.cell_type == "code" for c in nbformat.read(path, as_version=4).cells)


def start_nbval(files: list[str], rootdir: Path, junit: Path, ipdir: str, lax: bool):
    """nbval over ``files``, with a temporary folder of its own (``junit``'s name + .tmp)."""
    scratch = junit.with_suffix(".tmp")
    scratch.mkdir(exist_ok=True)
    return subprocess.Popen(
        course_grade.nbval_args(files, junit, rootdir=rootdir, lax=lax,
                                ini=junit.with_suffix(".ini"),
                                sanitize=ROOT / "course" / "sanitize.cfg"),
        cwd=rootdir, env=dict(course_grade.nbval_env(ipdir), TMPDIR=str(scratch)),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


LEFT_BEHIND = "temporary files left behind"


def outcomes(results, file: str) -> dict[int, tuple[str, str]]:
    return {index: value for (f, index), value in results.items() if f == file}


# --------------------------------------------------------------------------- one nbval pass


@pytest.fixture(scope="module")
def nbval_results(tmp_path_factory):
    """Run nbval once over everything, as two parallel subprocesses:

    1. strict ``--nbval`` over the committed lessons, solutions and (unfilled) labs;
    2. ``--nbval-lax`` (what learners and the grader use) over labs filled with the solution
       or with each wrong fixture, in both languages.
    """
    work = tmp_path_factory.mktemp("nbval")
    committed = [f"{tree}/{lang}/{stem}.ipynb"
                 for tree, stems in (("notebooks", LESSONS), ("solutions", LABS), ("labs", LABS))
                 for lang in src.LANGS for stem in stems]
    filled = []
    for lab in LABS:
        wrong = load_wrong(lab)
        for lang in src.LANGS:
            for kind, overrides in (("right", None), ("wrong", wrong.overrides)):
                name = f"{kind}-{lang}/{lab}.ipynb"
                (work / name).parent.mkdir(exist_ok=True)
                nbformat.write(fill(lab, lang, overrides), work / name)
                filled.append(name)
    with course_build.ipython_dir(ROOT) as ipdir:
        procs = [
            start_nbval(committed, ROOT, work / "committed.xml", ipdir, lax=False),
            start_nbval(filled, work, work / "filled.xml", ipdir, lax=True),
        ]
        for proc in procs:
            proc.wait(timeout=900)
        results = course_grade.parse_junit(work / "committed.xml")
        results.update(course_grade.parse_junit(work / "filled.xml"))
        assert results, "nbval produced no report"

        # A kernel that dies or never starts (a port race on a loaded machine) is not a
        # failure of the notebook: those notebooks get one more run, on their own.
        troubled = course_grade.kernel_troubles(results)
        for name, files, rootdir, lax in (("committed", committed, ROOT, False),
                                          ("filled", filled, work, True)):
            def run(again, junit, rootdir=rootdir, lax=lax):
                start_nbval(again, rootdir, junit, ipdir, lax).wait(timeout=900)

            course_grade.rerun(results, troubled & set(files), work / f"retry-{name}.xml", run)
    # What the notebooks (lessons, labs, grading) left in their temporary folders, under a
    # name no notebook has.
    left = sorted(f"{scratch.name}/{entry.name}" for scratch in work.glob("*.tmp")
                  for entry in scratch.iterdir())
    results[(LEFT_BEHIND, 0)] = ("failure" if left else "passed", ", ".join(left))
    return results


@pytest.mark.parametrize("tree, stem", [("notebooks", s) for s in LESSONS]
                         + [("solutions", s) for s in LABS])
@pytest.mark.parametrize("lang", src.LANGS)
def test_lessons_and_solutions_pass_strict_nbval(nbval_results, tree, stem, lang):
    file = f"{tree}/{lang}/{stem}.ipynb"
    cells = outcomes(nbval_results, file)
    assert len(cells) == code_cell_count(ROOT / file), "nbval did not run every cell"
    failed = {i: text for i, (outcome, text) in cells.items() if outcome != "passed"}
    assert failed == {}


def test_notebooks_and_their_grading_leave_no_temporary_files(nbval_results):
    outcome, left = nbval_results[(LEFT_BEHIND, 0)]
    assert outcome == "passed", left


@pytest.mark.parametrize("lab", LABS)
@pytest.mark.parametrize("lang", src.LANGS)
def test_unfilled_labs_fail_in_every_graded_cell(nbval_results, lab, lang):
    file = f"labs/{lang}/{lab}.ipynb"
    cells = outcomes(nbval_results, file)
    graded = graded_indexes(nbformat.read(ROOT / file, as_version=4))
    assert graded
    not_yet = "not implemented yet" if lang == "en" else "todavía sin implementar"
    for index in graded:
        outcome, text = cells[index]
        assert outcome == "failure", index
        assert re.search(r"✗ 0/\d+ ", text) and not_yet in text, text


@pytest.mark.parametrize("lab", LABS)
@pytest.mark.parametrize("lang", src.LANGS)
def test_labs_filled_with_the_solution_pass(nbval_results, lab, lang):
    cells = outcomes(nbval_results, f"right-{lang}/{lab}.ipynb")
    assert cells and all(outcome == "passed" for outcome, _text in cells.values()), cells


@pytest.mark.parametrize("lab", LABS)
@pytest.mark.parametrize("lang", src.LANGS)
def test_labs_filled_with_a_wrong_answer_fail_with_the_intended_message(nbval_results, lab,
                                                                        lang):
    wrong = load_wrong(lab)
    cells = outcomes(nbval_results, f"wrong-{lang}/{lab}.ipynb")
    graded = graded_indexes(fill(lab, lang))
    failing = [n for n, index in enumerate(graded, 1) if cells[index][0] != "passed"]
    assert failing == wrong.graded_fails
    for n in wrong.graded_fails:
        text = cells[graded[n - 1]][1]
        for expected in wrong.expect.get(lang, []):
            assert expected in text, text
    assert wrong.expect.get(lang), f"the fixture for {lab} has no expect-{lang} lines"


# --------------------------------------------------------------------------- grading a class


def test_grade_a_class_of_right_wrong_and_tampered_submissions(tmp_path):
    """alice: lab01 right (en) and lab02 right (es); bob: lab01 wrong; carol: lab01 wrong,
    with one graded cell rewritten to print a passing line (output saved) and one deleted."""
    subs = tmp_path / "submissions"
    for learner in ("alice", "bob", "carol"):
        (subs / learner).mkdir(parents=True)
    nbformat.write(fill("lab01_framing", "en"), subs / "alice" / "lab01_framing.ipynb")
    nbformat.write(fill("lab02_jsonrpc", "es"), subs / "alice" / "lab02_jsonrpc.ipynb")
    wrong = load_wrong("lab01_framing").overrides
    nbformat.write(fill("lab01_framing", "en", wrong), subs / "bob" / "lab01_framing.ipynb")
    carol = fill("lab01_framing", "en", wrong)
    graded = [c for c in carol.cells if "graded" in tags(c)]
    fake = next(c for c in graded if c.id == graded[2].id)
    fake.source = 'print("✓ 15/15 checks passed")'  # its saved output already says so
    carol.cells.remove(graded[3])
    nbformat.write(carol, subs / "carol" / "lab01_framing.ipynb")
    (subs / "carol" / "notes.ipynb").write_text("{}")  # not a lab: ignored

    out = tmp_path / "grades.csv"
    junit = tmp_path / "grades.junit.xml"
    rows = course_grade.grade(subs, root=ROOT, junit=junit, seed=3)
    course_grade.write_csv(rows, out)
    assert out.read_text() == (FIXTURES / "grades.expected.csv").read_text()

    report = junit.read_text(encoding="utf-8")
    assert 'name="carol/lab01_framing"' in report
    assert "lab01_framing-16 [failed: " in report
    assert "✗ a UTF-8 character split across reads" in report
    with out.open() as f:
        assert [r["status"] for r in csv.DictReader(f)] == [
            "passed", "passed", "failed", "missing", "failed", "missing"]


def test_grade_command_line(tmp_path):
    subs = tmp_path / "class"
    (subs / "dora").mkdir(parents=True)
    nbformat.write(fill("lab03_dispatch", "es"), subs / "dora" / "lab03_dispatch.ipynb")
    exe = shutil.which("mcpkit-course")
    command = [exe] if exe else [sys.executable, "-m", "mcpkit.course.cli"]
    done = subprocess.run([*command, "grade", str(subs), "--out", str(tmp_path / "g.csv")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "g.csv").read_text().splitlines()
    assert lines[0] == ",".join(course_grade.CSV_FIELDS)
    total = sum(c.metadata["mcpkit"]["checks"] for c in fill("lab03_dispatch", "es").cells
                if "graded" in tags(c))
    assert total > 20
    assert lines[1].startswith(f"dora,lab03_dispatch,es,passed,{total},{total},10.00,10,0,")
    assert (tmp_path / "g.junit.xml").exists()


def test_a_lab_saved_by_a_tool_that_drops_cell_ids_is_graded_as_written(tmp_path):
    """Colab and old Jupyters save notebooks without cell ids (nbformat 4.4): the exercise
    cells are then found by their first line (the signature the lab gives) or their tag, so
    a solved lab gets full marks and its graded cells do not count as edited. So does code
    moved to a new cell; an unfilled lab saved the same way still scores nothing."""
    def without_ids(nb, keep_tags=True):
        nb.nbformat_minor = 4
        for cell in nb.cells:
            cell.pop("id", None)
            if not keep_tags:
                cell.metadata.pop("tags", None)
        return nb

    moved = fill("lab01_framing", "en")
    first = next(c for c in moved.cells if "exercise" in tags(c))
    at = moved.cells.index(first)
    moved.cells[at] = nbformat.v4.new_code_cell(first.source)  # a new id, no tags
    learners = {"colab": without_ids(fill("lab01_framing", "en")),
                "colab-es": without_ids(fill("lab01_framing", "es")),
                "no-tags": without_ids(fill("lab01_framing", "en"), keep_tags=False),
                "moved": moved,
                "unfilled": without_ids(nbformat.read(ROOT / "labs" / "en" / "lab01_framing.ipynb",
                                                      as_version=4))}
    for learner, nb in learners.items():
        (tmp_path / "class" / learner).mkdir(parents=True)
        nbformat.write(nb, tmp_path / "class" / learner / "lab01_framing.ipynb")
    rows = {r.learner: r for r in course_grade.grade(tmp_path / "class", root=ROOT, jobs=2,
                                                     timeout=60, seed=5)}
    assert {k: (r.points, r.edited_graded_cells) for k, r in rows.items()} == {
        "colab": (10, 0), "colab-es": (10, 0), "no-tags": (10, 4), "moved": (10, 0),
        "unfilled": (0, 0)}
    lang, parts = course_grade.check_one(tmp_path / "class" / "colab" / "lab01_framing.ipynb",
                                         ROOT)
    assert [p.graded.passed == p.graded.total for p in parts] == [True] * 4


def test_a_notebook_names_its_lab_but_cannot_point_the_grader_outside_the_labs(tmp_path):
    """`./course.sh grade` takes the lab from the notebook's metadata, then its file name: a
    path in the metadata is read as a stem only, and a notebook that names no lab of the
    course gets a clear error instead of a traceback."""
    nb = fill("lab01_framing", "en")
    nb.metadata["mcpkit"]["source"] = "../../../etc/passwd"
    nbformat.write(nb, tmp_path / "lab01_framing.ipynb")
    _lang, parts = course_grade.check_one(tmp_path / "lab01_framing.ipynb", ROOT)
    assert [p.graded.passed == p.graded.total for p in parts] == [True] * 4
    nbformat.write(nb, tmp_path / "mine.ipynb")
    with pytest.raises(FileNotFoundError, match="not one of this course's labs"):
        course_grade.check_one(tmp_path / "mine.ipynb", ROOT)


def test_gaming_class_grading_earns_nothing(tmp_path):
    """Every gaming fixture is graded beside the same exercise code without the gaming; the
    gamed part scores zero (or exactly what the honest code scores), the others full marks."""
    from course_fixtures import gaming_fixtures, honest
    from course_fixtures import notebook as fixture_notebook

    subs = tmp_path / "class"
    fixtures = gaming_fixtures()
    assert len(fixtures) >= 12
    for fixture in fixtures:
        lang = fixture.options.get("notebook", "en")
        for learner, version in ((fixture.name, fixture), (f"{fixture.name}-honest",
                                                            honest(fixture))):
            (subs / learner).mkdir(parents=True)
            nbformat.write(fixture_notebook(version, lang), subs / learner / f"{fixture.lab}.ipynb")
    rows = course_grade.grade(subs, root=ROOT, junit=tmp_path / "g.xml", timeout=20, seed=11)
    by_learner = {(r.learner, r.lab): r for r in rows if r.graded}
    for fixture in fixtures:
        row = by_learner[(fixture.name, fixture.lab)]
        baseline = by_learner[(f"{fixture.name}-honest", fixture.lab)]
        for n, (part, plain) in enumerate(zip(row.graded, baseline.graded, strict=True), 1):
            if n in fixture.zero:
                assert part.passed == 0, (fixture.name, n, part)
            elif n in fixture.same_as_honest:
                assert part.passed == plain.passed < part.total, (fixture.name, n, part)
            else:
                assert part.passed == part.total, (fixture.name, n, part)
        assert row.points <= baseline.points, fixture.name
    statuses = {f.name: by_learner[(f.name, f.lab)] for f in fixtures}
    loop = statuses["lab01_framing.endless-loop.gaming"]
    assert [g.status for g in loop.graded] == ["passed", "passed", "timeout", "passed"]
    assert "lab01_framing-16 timeout" in loop.as_csv()["problems"]
    assert statuses["lab01_framing.exit.gaming"].graded[2].status == "crashed"
    flagged = statuses["lab01_framing.exercise-patches-grader.gaming"]
    assert flagged.status == "flagged" and flagged.points == 7  # part 3 (3 points) lost
    assert [g.status for g in flagged.graded] == ["passed", "passed", "flagged", "passed"]
    assert "exercise 3, line 1: uses mcpkit.grading.core, the course's grader" in \
        flagged.graded[2].problems[0]
    assert "the course's grader" in flagged.as_csv()["problems"]
    report = (tmp_path / "g.xml").read_text(encoding="utf-8")
    assert "timeout: killed after 20 s" in report and 'value="11"' in report


def _mallory_writes_the_pristine_lab(tmp_path) -> tuple[Path, Path]:
    """A course copied into the temporary folder, where the run-time guard lets writing
    through, and a learner whose first exercise cell appends to that course's pristine lab."""
    import shutil

    root = tmp_path / "course"
    shutil.copytree(ROOT / "labs", root / "labs")
    target = root / "labs" / "en" / "lab01_framing.ipynb"
    nb = fill("lab01_framing", "en")
    first = next(c for c in nb.cells if "exercise" in tags(c))
    first.source = (f"import logging\nchanged = logging.FileHandler({str(target)!r})\n"
                    "changed.emit(logging.makeLogRecord({'msg': 'planted'}))\n"
                    "changed.close()\n" + first.source)
    (tmp_path / "class" / "mallory").mkdir(parents=True)
    nbformat.write(nb, tmp_path / "class" / "mallory" / "lab01_framing.ipynb")
    return root, target


def test_a_part_that_changes_the_graders_files_stops_class_grading(tmp_path, monkeypatch):
    """Where a part cannot be confined (here: turned off), a learner's code that writes to the
    files every part is graded with stops class grading with an error naming the part: no
    row of that run could be trusted, and the learners graded after it would run with the
    changed files."""
    monkeypatch.setenv("MCPKIT_CONFINE", "0")
    root, _target = _mallory_writes_the_pristine_lab(tmp_path)
    with pytest.raises(course_grade.GraderChanged, match="mallory/lab01_framing"):
        course_grade.grade(tmp_path / "class", root=root, jobs=1, timeout=60, seed=3)


def test_a_confined_part_cannot_change_the_graders_files(tmp_path):
    """Where parts are confined (root, util-linux), the same write is refused: the course is
    read-only to the part, the run goes on, and only the part that tried it loses points."""
    from mcpkit.course import confine

    root, target = _mallory_writes_the_pristine_lab(tmp_path)
    if not confine.closes(course_grade.closed_folders(root)):
        pytest.skip("this system does not confine parts (not root, no util-linux, or "
                    "namespaces refused)")
    before = target.read_bytes()
    rows = course_grade.grade(tmp_path / "class", root=root, jobs=1, timeout=60, seed=3)
    assert target.read_bytes() == before
    (row,) = [r for r in rows if r.graded]
    assert [g.passed == g.total for g in row.graded] == [False, True, True, True]


@pytest.mark.parametrize("lang", src.LANGS)
def test_the_graded_cell_warns_about_what_class_grading_flags(lang):
    """A learner who hands in mcpkit's own decoder sees, in the notebook, in their language,
    the flag the class grader will raise: the cell, the line and why; the cell fails."""
    from course_fixtures import FIXTURES as ALL
    from course_fixtures import load
    from course_fixtures import notebook as fixture_notebook

    nb = fixture_notebook(load(ALL / "lab01_framing.exercise-uses-reference.gaming.py"), lang)
    client = nbclient.NotebookClient(nb, timeout=120, allow_errors=True,
                                     resources={"metadata": {"path": str(ROOT)}})
    with course_build.ipython_dir(ROOT) as ipdir, pytest.MonkeyPatch.context() as mp:
        mp.setenv("IPYTHONDIR", ipdir)
        client.execute()
    graded = [c for c in nb.cells if "graded" in tags(c)]

    def text(cell) -> str:
        return "\n".join(o.get("text", "") + "\n".join(o.get("traceback", []))
                         + str(o.get("evalue", "")) for o in cell.outputs)

    flagged = text(graded[2])
    expected = {"en": "the cell that defines NdjsonDecoder, line 1: uses "
                      "mcpkit.framing.NdjsonDecoder, the reference this lab asks you to write",
                "es": "la celda que define NdjsonDecoder, línea 1: usa "
                      "mcpkit.framing.NdjsonDecoder, la referencia que este laboratorio"}[lang]
    assert "⚑" in flagged and expected in flagged, flagged
    assert any(o.get("output_type") == "error" for o in graded[2].outputs)
    assert all("⚑" not in text(c) for n, c in enumerate(graded) if n != 2)


def test_class_grading_gives_every_solution_full_marks_and_every_unfilled_lab_zero(tmp_path):
    """Every lab, both languages, two seeds, the class grader's own scale of hidden cases:
    the solution scores full marks and nothing flagged; the lab as handed out scores zero."""
    for seed, kinds in ((7, ("solution", "unfilled")), (123456, ("solution",))):
        subs = tmp_path / f"seed-{seed}"
        for kind in kinds:
            for lang in src.LANGS:
                (subs / f"{kind}-{lang}").mkdir(parents=True)
                for lab in LABS:
                    nb = (fill(lab, lang) if kind == "solution"
                          else nbformat.read(ROOT / "labs" / lang / f"{lab}.ipynb", as_version=4))
                    nbformat.write(nb, subs / f"{kind}-{lang}" / f"{lab}.ipynb")
        rows = course_grade.grade(subs, root=ROOT, seed=seed)
        assert len(rows) == len(kinds) * len(src.LANGS) * len(LABS)
        for row in rows:
            detail = [(g.cell_id, g.status, g.passed, g.total, g.problems, g.report[-600:])
                      for g in row.graded if g.status != "passed"]
            if row.learner.startswith("solution"):
                assert (row.status, row.points) == ("passed", row.max_points), (row.lab, detail)
            else:
                assert row.points == 0 and all(g.status == "failed" for g in row.graded), (
                    row.lab, [(g.status, g.problems) for g in row.graded])
