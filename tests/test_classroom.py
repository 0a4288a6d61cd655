"""The course in a classroom: a learner's progress, handing a lab in, grading the exchange.

Everything runs the way a learner and an instructor do: ``course.sh`` from a plain shell on a
copy of the course, the learner's work in ``work/``, a real exchange folder, the class graded
by ``mcpkit-course grade`` in sandbox processes. The Canvas file is checked against the
columns Canvas documents for its gradebook import, by a reader written here, not by the
writer's own constants.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

from mcpkit.course import exchange, progress, workspace  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MCPKIT_COURSE = Path(sys.prefix, "bin", "mcpkit-course")
pytestmark = pytest.mark.skipif(not MCPKIT_COURSE.exists(),
                                reason="mcpkit is not installed in this environment")


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A copy of the course as a learner's clone has it, with its working copies made."""
    root = tmp_path / "course-copy"
    for tree in ("course", "labs", "notebooks", "solutions"):
        shutil.copytree(ROOT / tree, root / tree)
    shutil.copy2(ROOT / "course.sh", root / "course.sh")
    workspace.make(root)
    return root


def shell(root: Path, *args: str, user: str = "learner") -> subprocess.CompletedProcess:
    """``course.sh`` as a learner's fresh terminal runs it: no venv on PATH; MCPKIT_VENV
    names the venv these tests run in."""
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"),
           "MCPKIT_VENV": sys.prefix, "LANG": "C.UTF-8", "USER": user}
    return subprocess.run(["bash", str(root / "course.sh"), *args], cwd=root / "work", env=env,
                          capture_output=True, text=True, timeout=300)


def instructor(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(MCPKIT_COURSE), "--root", str(root), *args], cwd=root,
                          capture_output=True, text=True, timeout=600)


def fill(root: Path, lab: str, lang: str, solved: int | None = None) -> Path:
    """Put the solution into the learner's copy, exercise cell by exercise cell (the first
    ``solved`` of them), as a learner types it."""
    mine = root / "work" / "labs" / lang / f"{lab}.ipynb"
    nb = nbformat.read(mine, as_version=4)
    solution = {c.id: c for c in nbformat.read(root / "solutions" / lang / f"{lab}.ipynb",
                                               as_version=4).cells}
    exercises = [c for c in nb.cells if "exercise" in c.metadata.get("tags", [])]
    for cell in exercises[:solved]:
        cell.source = solution[cell.id].source
    nbformat.write(nb, mine)
    return mine


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("lang,learner,heading,complete", [
    ("en", "ana", "Your progress", "10.0/10  graded"),
    ("es", "bruno", "Tu progreso", "10.0/10  calificado el"),
])
def test_a_learner_grades_sees_progress_submits_and_the_instructor_grades_it(
        course, tmp_path, lang, learner, heading, complete):
    exchange_dir = tmp_path / "exchange"
    exchange_dir.mkdir()
    fill(course, "lab01_framing", lang)
    graded = shell(course, "grade", "lab01")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    shown = shell(course, "progress")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == heading
    assert re.search(rf"^✓ lab01_framing +{re.escape(complete)} ", shown.stdout, re.M), lines
    assert re.search(r"^  lab02_jsonrpc +-/10 ", shown.stdout, re.M)
    assert shown.stdout.count("(10/10") + shown.stdout.count("(16/16") >= 2  # per part
    handed = shell(course, "submit", "lab01", "--to", str(exchange_dir), user=learner)
    assert handed.returncode == 0, handed.stderr
    [copy] = (exchange_dir / learner / "lab01_framing").glob("*.ipynb")
    assert exchange.stamp_of(copy.stem) is not None
    out = tmp_path / "grades.csv"
    done = instructor(course, "grade", str(exchange_dir), "--out", str(out), "--jobs", "2")
    assert done.returncode == 0, done.stderr
    [row] = read_csv(out)
    assert (row["learner"], row["lang"], row["status"], row["points"], row["max_points"]) == (
        learner, lang, "passed", "10.00", "10")
    assert row["submitted"] == datetime.strptime(copy.stem, exchange.STAMP).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def test_a_lab_never_graded_changed_since_or_with_nowhere_to_go_is_refused(course, tmp_path):
    exchange_dir = tmp_path / "exchange"
    exchange_dir.mkdir()
    mine = fill(course, "lab02_jsonrpc", "en", solved=1)
    never = shell(course, "submit", "lab02", "--to", str(exchange_dir))
    assert never.returncode == 2
    assert "never graded: run ./course.sh grade lab02 first" in never.stderr
    assert shell(course, "grade", "lab02").returncode == 1  # graded, not every part passes
    nb = nbformat.read(mine, as_version=4)
    nb.cells[-1].source += "\n"  # saved again after the grade, with a change
    nbformat.write(nb, mine)
    changed = shell(course, "submit", "lab02", "--to", str(exchange_dir))
    assert changed.returncode == 2
    assert "changed since you graded it" in changed.stderr
    assert "./course.sh grade lab02 again" in changed.stderr
    # Running the cells again (new outputs and counts, same code) is no change.
    assert shell(course, "grade", "lab02").returncode == 1
    nb = nbformat.read(mine, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.execution_count = 7
    nbformat.write(nb, mine)
    missing = shell(course, "submit", "lab02", "--to", str(tmp_path / "typo"))
    assert missing.returncode == 2 and "no exchange folder" in missing.stderr
    assert not (tmp_path / "typo").exists()
    (exchange_dir / "learner").write_text("a file where the learner's folder would go")
    blocked = shell(course, "submit", "lab02", "--to", str(exchange_dir))
    assert blocked.returncode == 2 and "cannot write into the exchange folder" in blocked.stderr
    bad = shell(course, "submit", "lab02", "--to", str(exchange_dir), "--as", "../eve")
    assert bad.returncode == 2 and "cannot name a learner's folder" in bad.stderr
    assert sorted(p.name for p in exchange_dir.rglob("*")) == ["learner"]  # nothing written
    (exchange_dir / "learner").unlink()
    ok = shell(course, "submit", "lab02", "--to", str(exchange_dir))
    assert ok.returncode == 0, ok.stderr
    assert "its last grade: 4.0/10 points" in ok.stdout  # part 1 of lab 02: 4 points


def test_a_lab_that_is_no_longer_a_notebook_is_named_not_a_traceback(course, tmp_path):
    """Grading, progress and hand-in of a copy cut short after its grade (a full disk, an
    editor): each says which file and what to do, in both languages; progress still shows."""
    (tmp_path / "ex").mkdir()
    mine = fill(course, "lab01_framing", "en", solved=1)
    assert shell(course, "grade", "lab01").returncode == 1
    mine.write_text(mine.read_text()[:500])
    for args in (["grade", "lab01"], ["submit", "lab01", "--to", str(tmp_path / "ex")]):
        done = shell(course, *args)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert "lab01_framing.ipynb: not a notebook any more" in done.stderr
        assert "ya no es un cuaderno" in done.stderr and "Revert Notebook to Checkpoint" in \
            done.stderr
    shown = shell(course, "progress")
    assert shown.returncode == 0, shown.stderr
    assert "changed since this grade: grade it again" in shown.stdout
    assert list((tmp_path / "ex").iterdir()) == []


def test_the_spanish_refusals_are_in_spanish(course, tmp_path):
    (tmp_path / "ex").mkdir()
    fill(course, "lab01_framing", "es", solved=1)
    refused = shell(course, "submit", "lab01", "--to", str(tmp_path / "ex"))
    assert refused.returncode == 2
    assert "todavía no se ha calificado: ejecuta primero ./course.sh grade lab01" in refused.stderr


def _hand_in(exchange_dir: Path, learner: str, nb_path: Path, at: str) -> Path:
    folder = exchange_dir / learner / "lab01_framing"
    folder.mkdir(parents=True, exist_ok=True)
    when = datetime.fromisoformat(at).astimezone(UTC)
    target = folder / f"{when.strftime(exchange.STAMP)}.ipynb"
    shutil.copyfile(nb_path, target)
    return target


def test_the_latest_hand_in_is_graded_and_late_ones_are_marked(course, tmp_path):
    """Ana hands in an unfilled lab, then the solution before the deadline; Bruno the solution,
    then (after the deadline) a worse one: the latest is graded, not the best. Carla's lab was
    collected by hand (no time: never late); a stray file is named and left out."""
    ex = tmp_path / "exchange"
    unfilled = course / "labs" / "en" / "lab01_framing.ipynb"
    solved = course / "solutions" / "en" / "lab01_framing.ipynb"
    _hand_in(ex, "ana", unfilled, "2026-12-01T09:00:00+00:00")
    _hand_in(ex, "ana", solved, "2026-12-01T10:00:00+00:00")
    _hand_in(ex, "bruno", solved, "2026-12-01T09:30:00+00:00")
    _hand_in(ex, "bruno", unfilled, "2026-12-01T12:00:01+00:00")
    (ex / "carla").mkdir()
    shutil.copyfile(solved, ex / "carla" / "lab01_framing.ipynb")
    (ex / "ana" / "lab01_framing" / "notes.txt").write_text("not a hand-in")
    out = tmp_path / "grades.csv"
    totals = tmp_path / "totals.csv"
    done = instructor(course, "grade", str(ex), "--out", str(out), "--totals", str(totals),
                      "--deadline", "2026-12-01T13:00+01:00", "--seed", "7")
    assert done.returncode == 0, done.stderr
    assert "ignoring" in done.stderr and "notes.txt" in done.stderr
    rows = {r["learner"]: r for r in read_csv(out)}
    assert {k: (r["points"], r["submitted"], r["late"]) for k, r in rows.items()} == {
        "ana": ("10.00", "2026-12-01T10:00:00Z", "no"),
        "bruno": ("0.00", "2026-12-01T12:00:01Z", "yes"),
        "carla": ("10.00", "", ""),
    }
    assert "deadline 2026-12-01 12:00:00 UTC" in done.stdout
    assert read_csv(totals) == [
        {"learner": "ana", "lab01_framing": "10.00", "total": "10.00", "max_total": "10",
         "labs_complete": "1", "late_labs": "0"},
        {"learner": "bruno", "lab01_framing": "0.00", "total": "0.00", "max_total": "10",
         "labs_complete": "0", "late_labs": "1"},
        {"learner": "carla", "lab01_framing": "10.00", "total": "10.00", "max_total": "10",
         "labs_complete": "1", "late_labs": "0"},
    ]
    bad = instructor(course, "grade", str(ex), "--out", str(out), "--deadline", "friday")
    assert bad.returncode == 2 and "ISO 8601" in bad.stderr


# --------------------------------------------------------------------------- Canvas

#: Canvas's gradebook import, as its guides document it: these identity columns first (a
#: student is found by ID, SIS User ID or SIS Login ID), then one column per assignment, and an
#: optional "Points Possible" row under the header.
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def canvas_problems(path: Path) -> list[str]:
    """What Canvas's gradebook import would refuse or misread in ``path``."""
    problems = []
    with path.open(newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    header, body = table[0], table[1:]
    if header[:5] != CANVAS_COLUMNS:
        problems.append(f"the first columns are {header[:5]}, not {CANVAS_COLUMNS}")
    assignments = header[5:]
    if not assignments or len(set(assignments)) != len(assignments):
        problems.append(f"assignment columns missing or repeated: {assignments}")
    possible = None
    if body and body[0][0].strip() == "Points Possible":
        possible, body = body[0], body[1:]
        if any(possible[1:5]) or not all(re.fullmatch(r"\d+(\.\d+)?", v) for v in possible[5:]):
            problems.append(f"bad Points Possible row: {possible}")
    seen = set()
    for row in body:
        if len(row) != len(header):
            problems.append(f"row of {len(row)} cells under {len(header)} columns: {row}")
            continue
        if not row[0] or not any(row[1:4]):
            problems.append(f"a student without a name or any of ID, SIS User ID, SIS Login "
                            f"ID: {row}")
        key = tuple(row[1:4])
        if key in seen:
            problems.append(f"student listed twice: {row}")
        seen.add(key)
        for i, score in enumerate(row[5:], 5):
            if score and not re.fullmatch(r"\d+(\.\d+)?", score):
                problems.append(f"score {score!r} of {header[i]} is not a number")
            elif score and possible and float(score) > float(possible[i]):
                problems.append(f"score {score} of {header[i]} over its {possible[i]} points")
    return problems


def test_canvas_files_with_and_without_the_course_roster(course, tmp_path):
    ex = tmp_path / "exchange"
    solved = course / "solutions" / "en" / "lab01_framing.ipynb"
    half = fill(course, "lab01_framing", "en", solved=2)
    _hand_in(ex, "ana", solved, "2026-12-01T10:00:00+00:00")
    _hand_in(ex, "bruno", half, "2026-12-01T10:00:00+00:00")
    _hand_in(ex, "zoe", solved, "2026-12-01T10:00:00+00:00")
    plain = tmp_path / "canvas.csv"
    done = instructor(course, "grade", str(ex), "--out", str(tmp_path / "g.csv"), "--canvas",
                      str(plain), "--seed", "3")
    assert done.returncode == 0, done.stderr
    assert canvas_problems(plain) == []
    assert [r["SIS Login ID"] for r in read_csv(plain)][1:] == ["ana", "bruno", "zoe"]
    # The gradebook as Canvas exports it: read-only score columns, a test student, the lab's
    # assignment already there under its id.
    roster = tmp_path / "export.csv"
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,lab01_framing (5501),Current Score\n"
        "    Points Possible,,,,,10,(read only)\n"
        '"García, Ana",101,S-0001,ana,MCP 2026,,\n'
        '"Pérez, Bruno",102,S-0002,bruno,MCP 2026,,\n'
        '"Student, Test",199,,testuser,MCP 2026,,\n', encoding="utf-8")
    mapped = tmp_path / "canvas-mapped.csv"
    done = instructor(course, "grade", str(ex), "--out", str(tmp_path / "g.csv"), "--canvas",
                      str(mapped), "--roster", str(roster), "--seed", "3")
    assert done.returncode == 0, done.stderr
    assert canvas_problems(mapped) == []
    rows = read_csv(mapped)
    assert list(rows[0])[5:] == ["lab01_framing (5501)"]  # updates the existing assignment
    assert [(r["Student"], r["ID"], r["lab01_framing (5501)"]) for r in rows[1:]] == [
        ("García, Ana", "101", "10.00"), ("Pérez, Bruno", "102", "4.00")]
    assert "zoe: no student of the roster" in done.stderr
    not_canvas = tmp_path / "other.csv"
    not_canvas.write_text("name,score\nana,1\n")
    refused = instructor(course, "grade", str(ex), "--out", str(tmp_path / "g.csv"),
                         "--canvas", str(mapped), "--roster", str(not_canvas))
    assert refused.returncode == 2 and "not a Canvas gradebook export" in refused.stderr


def test_the_canvas_checker_catches_what_canvas_would_refuse(tmp_path):
    """The reader above must be able to fail: files Canvas would misread."""
    cases = {
        "Name,ID,SIS User ID,SIS Login ID,Section,lab01\nana,,,ana,,1\n": "first columns",
        "Student,ID,SIS User ID,SIS Login ID,Section,lab01\nana,,,,,1\n": "without a name",
        "Student,ID,SIS User ID,SIS Login ID,Section,lab01\nana,,,ana,,ten\n": "not a number",
        ("Student,ID,SIS User ID,SIS Login ID,Section,lab01\nPoints Possible,,,,,10\n"
         "ana,,,ana,,11\n"): "over its",
        "Student,ID,SIS User ID,SIS Login ID,Section,lab01,lab01\nana,,,ana,,1,1\n": "repeated",
    }
    for text, problem in cases.items():
        path = tmp_path / "c.csv"
        path.write_text(text)
        assert any(problem in p for p in canvas_problems(path)), (text, canvas_problems(path))


# --------------------------------------------------------------------------- progress


def test_progress_counts_the_lessons_a_learner_ran_and_not_the_built_outputs(course):
    """The working copies of the lessons keep their outputs but no execution counts; a lesson
    run in a kernel and saved (as JupyterLab saves it) counts as run."""
    from nbclient import NotebookClient

    before = {line.lesson: line.run for line in progress.lessons(course, "en")}
    assert set(before.values()) == {0}
    lesson = course / "work" / "notebooks" / "en" / "00_host_client_server.ipynb"
    nb = nbformat.read(lesson, as_version=4)
    assert any(c.outputs for c in nb.cells if c.cell_type == "code")  # still readable ahead
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(lesson.parent)}}).execute()
    nbformat.write(nb, lesson)
    after = {line.lesson: (line.run, line.cells) for line in progress.lessons(course, "en")}
    run, cells = after["00_host_client_server"]
    assert run == cells > 0
    assert after["01_framing"][0] == 0
    sheet = progress.text(course, "en")
    assert re.search(rf"^✓ 00_host_client_server +{cells}/{cells}$", sheet, re.M)
    assert "0 of 11 labs complete; 1 of 13 lessons run" in sheet


def test_the_start_page_shows_progress_as_a_widget_in_each_language(course):
    """The start page's two code cells run in a kernel from work/ and show the widget; its
    HTML is the learner's record, in the section's language."""
    from nbclient import NotebookClient

    fill(course, "lab01_framing", "es", solved=2)
    assert shell(course, "grade", "lab01").returncode == 1
    start = nbformat.read(course / "work" / "START.ipynb", as_version=4)
    code = [c for c in start.cells if c.cell_type == "code"]
    assert [c.source.splitlines()[-1] for c in code] == ['show("en")', 'show("es")']
    NotebookClient(start, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(course / "work")}}).execute()
    for cell in code:
        [shown] = cell.outputs
        assert "application/vnd.jupyter.widget-view+json" in shown["data"]
    state = json.dumps(start.metadata["widgets"], ensure_ascii=False)
    assert "Your progress" in state and "Tu progreso" in state
    assert "4.0/10" in state and "Parte 3 · NdjsonDecoder" in state
    assert "sin calificar todavía" in state and "not graded yet" in state


def test_a_learner_named_like_a_formula_is_text_in_every_csv(tmp_path):
    """A folder name is the learner's choice (a hand-collected folder, `submit --as`): one
    that starts like a spreadsheet formula must not run as one when the instructor opens
    the grades, so it is written as text; other names are written as they are."""
    import csv

    from mcpkit.course import grade as course_grade
    from mcpkit.course import gradebook

    names = ["=HYPERLINK(\"http://x\")", "+1+1", "-2", "@SUM(A1)", "ana", "b=c"]
    rows = [course_grade.Row(name, "lab01_framing", lang="en", status="passed", points=10.0,
                             max_points=10) for name in names]
    course_grade.write_csv(rows, tmp_path / "g.csv")
    gradebook.write_totals(rows, tmp_path / "t.csv")
    expected = ["'=HYPERLINK(\"http://x\")", "'+1+1", "'-2", "'@SUM(A1)", "ana", "b=c"]
    for name in ("g.csv", "t.csv"):
        with (tmp_path / name).open(newline="", encoding="utf-8") as f:
            assert sorted(r["learner"] for r in csv.DictReader(f)) == sorted(expected), name
