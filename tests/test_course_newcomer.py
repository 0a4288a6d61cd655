"""The course as a newcomer meets it: the traps found when it was tried from a fresh clone.

- ``./course.sh grade LAB`` works from any directory in a plain shell (no venv activated),
  reads the language from the notebook and prints a score per part, with part names;
- learners work in ``work/`` (copies made once, ignored by git), so their work never touches
  the trees the suite compares with a fresh build;
- graded cells in a lab show their expected line as a comment, unexecuted;
- the start page exists in both languages and is what ``./course.sh lab`` opens;
- git ignores checkpoints and working copies; pyproject installs without warnings.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

from mcpkit.course import build as course_build  # noqa: E402
from mcpkit.course import grade as course_grade  # noqa: E402
from mcpkit.course import workspace  # noqa: E402
from mcpkit.grading import core as grading_core  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def tags(cell) -> list[str]:
    return cell.metadata.get("tags", [])


def filled(lab: str, lang: str, solved: int) -> nbformat.NotebookNode:
    """The pristine lab with its first ``solved`` exercise cells holding the solution."""
    nb = nbformat.read(ROOT / "labs" / lang / f"{lab}.ipynb", as_version=4)
    solution = {c.id: c for c in nbformat.read(ROOT / "solutions" / lang / f"{lab}.ipynb",
                                               as_version=4).cells}
    for cell in [c for c in nb.cells if "exercise" in tags(c)][:solved]:
        cell.source = solution[cell.id].source
    return nb


def plain_shell(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run ``course.sh`` the way a learner's fresh terminal does: no venv on PATH, no
    PYTHONPATH, another working directory. MCPKIT_VENV names the venv these tests run in."""
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"),
           "MCPKIT_VENV": sys.prefix, "LANG": "C.UTF-8"}
    return subprocess.run(["bash", str(ROOT / "course.sh"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not Path(sys.prefix, "bin", "mcpkit-course").exists(),
                    reason="mcpkit is not installed in this environment")
def test_grade_from_a_plain_shell_scores_each_part_by_name(tmp_path):
    mine = tmp_path / "lab01_framing.ipynb"
    nbformat.write(filled("lab01_framing", "es", solved=2), mine)
    done = plain_shell(["grade", str(mine)], cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # not every part passes yet
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"✓ Parte 1 · Codificadores +2\.0/2 puntos  \(10/10 comprobaciones\)",
                        lines[1]), lines
    assert lines[2].startswith("✓ Parte 2 · Un cuerpo, un valor")
    assert lines[3].startswith("✗ Parte 3 · NdjsonDecoder") and "0.0/3 puntos" in lines[3]
    assert lines[4].strip() == "sin empezar"
    assert lines[-1] == "Nota: 4.0/10 puntos  (lab01_framing)"
    assert "Cell" not in done.stdout


def test_a_wrong_part_shows_its_first_failed_case(tmp_path):
    nb = filled("lab02_jsonrpc", "en", solved=3)
    first = next(c for c in nb.cells if "exercise" in tags(c))
    first.source += "\n\ndef classify(message):\n    return 'request'\n"
    path = tmp_path / "mine.ipynb"  # any name: the lab is read from the notebook
    nbformat.write(nb, path)
    lang, parts = course_grade.check_one(path, ROOT)
    assert lang == "en"
    assert [p.name for p in parts][0] == "Part 1 · classify"
    sheet = course_grade.format_parts("lab02_jsonrpc", lang, parts)
    lines = sheet.splitlines()
    assert lines[0].startswith("✗ Part 1 · classify")
    assert lines[1].startswith("    ✗ ")  # the check, then each of its fields, labelled
    assert lines[2].lstrip().startswith("input:") and lines[3].lstrip().startswith("expected:")
    assert lines[4].lstrip().startswith("got:")
    assert re.search(r"\(\d+ more failing: .* — --all shows every failing check\)", sheet)
    assert lines[-1].startswith("Score: ")


def test_all_shows_the_details_of_every_failing_check_not_only_the_first_few(tmp_path):
    """The graded cell details its first few failures (MAX_DETAILED_FAILURES); --all asks
    for every one, so no failing check is listed with nothing under it."""
    nb = filled("lab02_jsonrpc", "en", solved=3)
    first = next(c for c in nb.cells if "exercise" in tags(c))
    first.source += "\n\ndef classify(message):\n    return 'request'\n"
    path = tmp_path / "lab02_jsonrpc.ipynb"
    nbformat.write(nb, path)
    lang, parts = course_grade.check_one(path, ROOT, every_detail=True)
    sheet = course_grade.format_parts("lab02_jsonrpc", lang, parts, show_all=True)
    part1 = sheet.split("✗ Part 1")[1].split("✓ Part 2")[0].splitlines()[1:]
    failing = [i for i, line in enumerate(part1) if line.startswith("    ✗ ")]
    assert len(failing) > grading_core.MAX_DETAILED_FAILURES, part1
    for i in failing:
        assert i + 1 < len(part1) and part1[i + 1].startswith("        "), part1[i]


def test_a_failing_part_shows_every_field_of_its_check_and_all_of_them_on_request(tmp_path):
    """A decoder that raises on an empty read: the sheet shows the hand-written check with its
    input, expected value and the exception with its message; --all adds the generated case
    with its smallest input, the step, the error's message and the hint."""
    nb = filled("lab01_framing", "en", solved=4)
    decoder = [c for c in nb.cells if "exercise" in tags(c)][2]
    decoder.source = decoder.source.replace(
        "def feed(self, data", "def feed(self, data):\n        if not data:\n"
        "            raise ValueError('an empty read')\n        return self._feed(data)\n\n"
        "    def _feed(self, data", 1)
    path = tmp_path / "lab01_framing.ipynb"
    nbformat.write(nb, path)
    lang, parts = course_grade.check_one(path, ROOT)
    sheet = course_grade.format_parts("lab01_framing", lang, parts)
    part3 = sheet.split("✗ Part 3")[1].split("✓ Part 4")[0]
    assert "    ✗ feed(b'') returns an empty list" in part3
    assert "got:      raised ValueError: an empty read" in part3
    assert "input:    feed(b'')" in part3 and "expected: []" in part3
    assert "1 more failing: behaves like mcpkit's NdjsonDecoder" in part3
    everything = course_grade.format_parts("lab01_framing", lang, parts, show_all=True)
    generated = everything.split("✗ behaves like mcpkit's NdjsonDecoder")[1]
    for label in ("input:", "step:", "expected:", "got:", "hint:"):
        assert f"\n        {label}" in generated, (label, generated)
    assert "raised <ValueError>  (an empty read)" in generated
    assert "more failing" not in everything


def test_working_copies_are_made_once_and_leave_the_pristine_trees_alone(tmp_path):
    for tree in ("notebooks", "labs", "solutions"):
        shutil.copytree(ROOT / tree, tmp_path / tree)
    (tmp_path / "course").mkdir()
    shutil.copyfile(ROOT / "course" / "start.md", tmp_path / "course" / "start.md")
    created = workspace.make(tmp_path)
    assert tmp_path / "work" / "labs" / "es" / "lab01_framing.ipynb" in created
    assert tmp_path / "work" / "notebooks" / "en" / "04_server.ipynb" in created
    mine = tmp_path / "work" / "labs" / "en" / "lab01_framing.ipynb"
    mine.write_text(mine.read_text().replace("raise NotImplementedError()", "pass"))
    assert workspace.make(tmp_path) == []  # a second `./course.sh lab` keeps the work
    assert "raise NotImplementedError()" not in mine.read_text()
    assert course_build.compare_trees(ROOT, tmp_path) == []  # what the suite compares
    assert workspace.find_lab(tmp_path, "lab01") == mine  # the one saved last


def test_working_copies_and_checkpoints_are_ignored_by_git():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    paths = ["work/labs/en/lab01_framing.ipynb", "work/START.ipynb",
             "labs/en/.ipynb_checkpoints/lab01_framing-checkpoint.ipynb"]
    done = subprocess.run(["git", "check-ignore", *paths], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.stdout.split() == paths


def test_the_start_page_is_bilingual_and_opened_by_default():
    nb = workspace.start_page(ROOT)
    # With no kernelspec JupyterLab would open the page behind a "Select Kernel" dialog.
    assert nb.metadata["kernelspec"]["name"] == "python3"
    english, spanish = (c.source for c in nb.cells if c.source.startswith("## "))
    assert english.startswith("## Start here") and spanish.startswith("## Empieza aquí")
    for text, lang in ((english, "en"), (spanish, "es")):
        assert f"notebooks/{lang}/00_host_client_server.ipynb" in text
        assert "./course.sh grade lab01" in text
    script = (ROOT / "course.sh").read_text()
    assert '--LabApp.default_url="/lab/tree/work/START.ipynb"' in script
    assert re.search(r'lab\)\n(?:.*\n)*?.*mcpkit-course" workspace', script)


def test_graded_cells_show_the_expected_line_unexecuted():
    for lang, words in (("en", "# Expected once every check passes: ✓ "),
                        ("es", "# Lo esperado cuando pasan todas las comprobaciones: ✓ ")):
        for path in sorted((ROOT / "labs" / lang).glob("*.ipynb")):
            solved = {c.id: c for c in nbformat.read(ROOT / "solutions" / lang / path.name,
                                                     as_version=4).cells}
            for cell in nbformat.read(path, as_version=4).cells:
                if "graded" in tags(cell):
                    assert cell.execution_count is None and cell.outputs == []
                    first = cell.source.splitlines()[0]
                    printed = course_build.expected_line(solved[cell.id])
                    n = cell.metadata["mcpkit"]["checks"]
                    assert printed.startswith(f"✓ {n}/{n} "), (path.name, printed)
                    assert first == words + printed[2:], (path.name, first)


def test_pyproject_configures_without_deprecation_warnings():
    """A license table (not an SPDX string) or license classifiers make every install warn."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert isinstance(project["license"], str)
    assert not any(c.startswith("License ::") for c in project.get("classifiers", []))
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:  # the build's own is >= 77
        return
    from setuptools.config import pyprojecttoml

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pyprojecttoml.read_configuration(ROOT / "pyproject.toml")
    assert [str(w.message) for w in caught] == []
