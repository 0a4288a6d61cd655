"""The learner's own working copies: ``work/`` (ignored by git), made by ``./course.sh lab``.

The built trees (``notebooks/``, ``labs/``) are the course's pristine copies: the tests
compare them with a fresh build, and the grader reads the graded cells from them. A learner
who typed into them, or whose JupyterLab saved a lesson after a kernel connected, would break
those tests. So learners work in ``work/``: copies made once, never overwritten, plus a start
page (``work/START.ipynb``, both languages) that JupyterLab opens first.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat

from . import source as src

WORK = "work"
COPIED = ("notebooks", "labs")
START = "START.ipynb"


def start_page(root: Path) -> nbformat.NotebookNode:
    """``course/start.md`` as a notebook: one markdown cell per ``## `` section, and the
    progress widget's cell where a section says ``<!-- progress widget: LANG -->``."""
    text = (root / "course" / "start.md").read_text(encoding="utf-8")
    sections = re.split(r"^(?=## )", text, flags=re.MULTILINE)
    nb = nbformat.v4.new_notebook()
    # A kernelspec, though the page runs nothing: without one JupyterLab opens the page
    # behind a "Select Kernel" dialog, the first thing a newcomer would see.
    nb.metadata = {"kernelspec": dict(src.KERNELSPEC),
                   "language_info": dict(src.LANGUAGE_INFO)}
    nb.cells = []
    for section in (s for s in sections if s.strip()):
        # A marker line stands for a code cell: the progress widget, in that section's language.
        for piece in re.split(r"^<!-- progress widget: (\w+) -->$", section, flags=re.MULTILINE):
            if piece in src.LANGS:
                nb.cells.append(nbformat.v4.new_code_cell(
                    f'from mcpkit.course.progress import show\nshow("{piece}")'))
            elif piece.strip():
                nb.cells.append(nbformat.v4.new_markdown_cell(piece.strip("\n")))
    for number, cell in enumerate(nb.cells, 1):
        cell.id = f"start-{number:02d}"  # fixed: the page is identical on every machine
    return nb


def unnumbered(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A lesson with its outputs kept but no execution counts: a count in the learner's copy
    then means the learner ran that cell (how ``./course.sh progress`` tells lessons run)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.execution_count = None
            for output in cell.outputs:
                if "execution_count" in output:
                    output.execution_count = None
    return nb


def make(root: Path) -> list[Path]:
    """Create the working copies that are missing; return the files created.

    Existing copies are the learner's work and are left as they are. The start page is
    rewritten every time: it is not the learner's.
    """
    work = root / WORK
    created: list[Path] = []
    for tree in COPIED:
        for original in sorted((root / tree).glob("*/*.ipynb")):
            copy = work / original.relative_to(root)
            if not copy.exists():
                copy.parent.mkdir(parents=True, exist_ok=True)
                if tree == "notebooks":
                    nbformat.write(unnumbered(nbformat.read(original, as_version=4)), copy)
                else:
                    shutil.copyfile(original, copy)
                created.append(copy)
    work.mkdir(exist_ok=True)
    nbformat.write(start_page(root), work / START)
    return created


class Unreadable(ValueError):
    """A learner's copy that is no longer a notebook (cut short, edited by hand)."""


def read_copy(path: Path) -> nbformat.NotebookNode:
    """A learner's notebook; :class:`Unreadable`, saying what to do in both languages, when
    it cannot be read as one."""
    try:
        return nbformat.read(path, as_version=4)
    except (OSError, ValueError, AttributeError, KeyError) as exc:
        why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise Unreadable(
            f"{path}: not a notebook any more ({why}); open it in JupyterLab and use File → "
            "Revert Notebook to Checkpoint, or start the lab over: delete it and run "
            f"./course.sh lab / {path}: ya no es un cuaderno ({why}); ábrelo en JupyterLab "
            "y usa File → Revert Notebook to Checkpoint, o empieza el laboratorio de cero: "
            "bórralo y ejecuta ./course.sh lab") from None


def find_lab(root: Path, name: str) -> Path:
    """The learner's copy of the lab ``name`` (``lab01``, ``lab01_framing`` or a path).

    With a copy in each language, the one saved last is the one being worked on.
    """
    given = Path(name)
    if given.suffix == ".ipynb":
        if not given.exists():
            raise FileNotFoundError(f"{name}: no such notebook")
        return given
    found = [p for p in (root / WORK / "labs").glob("*/*.ipynb")
             if p.stem == name or p.stem.startswith(name + "_")]
    if not found:
        raise FileNotFoundError(
            f"no working copy of {name!r} under {WORK}/labs/: run ./course.sh lab first "
            f"(it makes your copies) / no hay copia de trabajo de {name!r} en {WORK}/labs/: "
            "ejecuta antes ./course.sh lab (crea tus copias)")
    return max(found, key=lambda p: p.stat().st_mtime)
