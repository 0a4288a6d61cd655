"""A learner's progress: the last grade of every lab and part, and which lessons were run.

Theory of operation
-------------------
Nothing is sent anywhere and no account is needed. ``./course.sh grade labNN`` records the
grade it printed in the learner's workspace, ``work/.progress.json`` (a hidden file, so
JupyterLab's file browser leaves it out; ``work/`` is ignored by git): per lab, when it was
graded, the notebook's language, a digest of the notebook as graded (``submit`` compares it:
a lab changed since its grade is graded again before it is handed in) and each part's points
and checks. Which lessons were run is not recorded at all: the learner's own copies of the
lessons say it, since a saved notebook keeps the execution count of every cell that ran.

``./course.sh progress`` prints both; :func:`show` is the same as a widget, for the start page.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import nbformat

from . import source as src
from .workspace import WORK, Unreadable, read_copy

RECORD = ".progress.json"

_WORDS = {
    "en": {"title": "Your progress", "labs": "Labs", "lessons": "Lessons (cells run)",
           "not_graded": "not graded yet", "graded": "graded", "done": "complete",
           "left": "left", "changed": "changed since this grade: grade it again",
           "points": "points", "checks": "checks",
           "total": "{earned:.1f}/{total:g} points; {labs} of {n_labs} labs complete; "
                    "{lessons} of {n_lessons} lessons run",
           "how": "Grade a lab with ./course.sh grade labNN; this page shows its last grade.",
           "refresh": "Refresh", "no_work": "no work/ folder yet: run ./course.sh lab first"},
    "es": {"title": "Tu progreso", "labs": "Laboratorios", "lessons": "Lecciones (celdas "
           "ejecutadas)", "not_graded": "sin calificar todavía", "graded": "calificado el",
           "done": "completo", "left": "por completar",
           "changed": "cambió desde que lo calificaste: califícalo de nuevo",
           "points": "puntos", "checks": "comprobaciones",
           "total": "{earned:.1f}/{total:g} puntos; {labs} de {n_labs} laboratorios "
                    "completos; {lessons} de {n_lessons} lecciones ejecutadas",
           "how": "Califica un laboratorio con ./course.sh grade labNN; aquí ves su última "
                  "nota.",
           "refresh": "Actualizar",
           "no_work": "todavía no existe la carpeta work/: ejecuta primero ./course.sh lab"},
}


def digest(nb: nbformat.NotebookNode) -> str:
    """The notebook's cells as graded: outputs and execution counts left out, so running the
    cells again (or JupyterLab saving them) does not count as a change."""
    cells = [[c.cell_type, c.get("id"), c.source] for c in nb.cells]
    return hashlib.sha256(json.dumps(cells).encode()).hexdigest()


def relative_name(root: Path, notebook: Path) -> str:
    """How the record names a notebook: its path from the course root (as given, when it is
    outside the course)."""
    path = Path(notebook).resolve()
    return str(path.relative_to(root.resolve())) if path.is_relative_to(root.resolve()) \
        else str(notebook)


def shown_time(stamp: str) -> str:
    """A recorded ``2026-12-02T14:30:05Z`` as the sheet shows it: ``2026-12-02 14:30:05 UTC``."""
    return stamp.replace("T", " ").replace("Z", " UTC")


def load(root: Path) -> dict:
    path = root / WORK / RECORD
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"labs": {}}
    return record if isinstance(record.get("labs"), dict) else {"labs": {}}


def record_grade(root: Path, notebook: Path, nb: nbformat.NotebookNode, lab: str,
                 lang: str, parts: list) -> bool:
    """Keep ``parts`` (:class:`mcpkit.course.grade.Part`), the grade of ``nb`` read from
    ``notebook``, as the last grade of ``lab``.

    Only the learner's own copies under ``work/labs/`` are recorded (grading a solution or a
    file elsewhere is no progress); returns whether it was.
    """
    if not Path(notebook).resolve().is_relative_to((root / WORK / "labs").resolve()):
        return False
    record = load(root)
    record["labs"][lab] = {
        "lang": lang, "graded_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "notebook": relative_name(root, notebook),
        "digest": digest(nb),
        "parts": [{"name": p.name, "cell": p.graded.cell_id, "earned": round(p.earned, 2),
                   "points": p.graded.points, "passed": p.graded.passed,
                   "total": p.graded.total, "status": p.graded.status} for p in parts],
    }
    path = root / WORK / RECORD
    # Written whole and renamed: a grade killed half-way never leaves a broken record.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".progress-", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, ensure_ascii=False)
    os.replace(tmp, path)
    return True


@dataclass
class LabLine:
    lab: str
    max_points: float
    parts: list[dict]  # the recorded parts, or the lab's parts with nothing earned
    graded_at: str = ""
    changed: bool = False

    @property
    def earned(self) -> float:
        return sum(p["earned"] for p in self.parts)

    @property
    def left(self) -> list[str]:
        """The names of the parts that lost points."""
        return [p["name"] for p in self.parts if p["passed"] != p["total"]]

    @property
    def complete(self) -> bool:
        return bool(self.graded_at) and not self.left


@dataclass
class LessonLine:
    lesson: str
    run: int
    cells: int

    @property
    def done(self) -> bool:
        return bool(self.cells) and self.run == self.cells


def labs(root: Path, lang: str) -> list[LabLine]:
    """Every lab of the course, with its last recorded grade (in the language asked for:
    part names come from the course's own lab in that language)."""
    from .grade import _points, _sources, part_names

    record = load(root)["labs"]
    lines = []
    for pristine_path in sorted((root / "labs" / lang).glob("*.ipynb")):
        lab = pristine_path.stem
        pristine = nbformat.read(pristine_path, as_version=4)
        names = part_names(pristine)
        graded = _sources(pristine, "graded")
        mine = record.get(lab)
        if mine:
            parts = [dict(p, name=names.get(p.get("cell"), p["name"])) for p in mine["parts"]]
            notebook = root / mine.get("notebook", "")
            try:
                changed = notebook.is_file() and digest(read_copy(notebook)) != mine.get(
                    "digest")
            except Unreadable:  # broken since its grade: that is a change too
                changed = True
            lines.append(LabLine(lab, sum(_points(c) for c in graded), parts,
                                 mine["graded_at"], changed))
        else:
            parts = [{"name": names[c.id], "cell": c.id, "earned": 0.0, "points": _points(c),
                      "passed": 0, "total": 1} for c in graded]
            lines.append(LabLine(lab, sum(_points(c) for c in graded), parts))
    return lines


def lessons(root: Path, lang: str) -> list[LessonLine]:
    """Each lesson of the learner's copies: how many of its code cells have run (as saved)."""
    lines = []
    for pristine in sorted((root / "notebooks" / lang).glob("*.ipynb")):
        mine = root / WORK / "notebooks" / lang / pristine.name
        try:
            nb = nbformat.read(mine if mine.exists() else pristine, as_version=4)
        except Exception:  # a notebook the learner broke by hand: nothing to count
            continue
        code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
        run = sum(1 for c in code if c.get("execution_count")) if mine.exists() else 0
        lines.append(LessonLine(pristine.stem, run, len(code)))
    return lines


def guess_lang(root: Path) -> str:
    """The language the learner works in: that of the lab graded last, else of the copy
    saved last (English while every copy is as ``./course.sh lab`` made it)."""
    graded = load(root)["labs"].values()
    if graded:
        lang = max(graded, key=lambda lab: lab.get("graded_at", "")).get("lang")
        if lang in src.LANGS:
            return lang
    copies = [p for tree in ("labs", "notebooks")
              for p in (root / WORK / tree).glob("*/*.ipynb")]
    if copies:
        saved = {p: p.stat().st_mtime for p in copies}
        newest = max(saved, key=saved.__getitem__)
        if saved[newest] - min(saved.values()) > 2 and newest.parent.name in src.LANGS:
            return newest.parent.name
    return src.LANGS[0]


def text(root: Path, lang: str) -> str:
    """The progress sheet ``./course.sh progress`` prints."""
    w = _WORDS[lang]
    if not (root / WORK).is_dir():
        return w["no_work"]
    lab_lines, lesson_lines = labs(root, lang), lessons(root, lang)
    width = max(len(line.lab) for line in lab_lines)
    out = [w["title"], "", w["labs"]]
    for line in lab_lines:
        head = f"{line.lab:<{width}}  "
        if not line.graded_at:
            out.append(f"  {head}   -/{line.max_points:g}  {w['not_graded']}")
            continue
        mark = "✓" if line.complete else "✗"
        out.append(f"{mark} {head}{line.earned:4.1f}/{line.max_points:g}  {w['graded']} "
                   f"{shown_time(line.graded_at)}"
                   + (f"  ({w['changed']})" if line.changed else ""))
        for p in line.parts:
            ok = p["passed"] == p["total"]
            out.append(f"      {'✓' if ok else '✗'} {p['name']}: {p['earned']:.1f}/"
                       f"{p['points']:g} {w['points']} ({p['passed']}/{p['total']} "
                       f"{w['checks']})")
        if line.left:
            out.append(f"      {w['left']}: " + "; ".join(line.left))
    out += ["", w["lessons"]]
    width = max((len(line.lesson) for line in lesson_lines), default=0)
    for line in lesson_lines:
        mark = "✓" if line.done else " "
        out.append(f"{mark} {line.lesson:<{width}}  {line.run:>3}/{line.cells}")
    out += ["", _total(lab_lines, lesson_lines, w), w["how"]]
    return "\n".join(out)


def _total(lab_lines: list[LabLine], lesson_lines: list[LessonLine], w: dict) -> str:
    return w["total"].format(
        earned=sum(line.earned for line in lab_lines),
        total=sum(line.max_points for line in lab_lines),
        labs=sum(line.complete for line in lab_lines), n_labs=len(lab_lines),
        lessons=sum(line.done for line in lesson_lines),
        n_lessons=len(lesson_lines))


def html(root: Path, lang: str) -> str:
    """The same as :func:`text`, as an HTML table (the start page's widget shows it)."""
    from html import escape

    w = _WORDS[lang]
    if not (root / WORK).is_dir():
        return f"<p>{escape(w['no_work'])}</p>"
    lab_lines, lesson_lines = labs(root, lang), lessons(root, lang)
    rows = []
    for line in lab_lines:
        if not line.graded_at:
            state = f"<i>{escape(w['not_graded'])}</i>"
            score = f"–/{line.max_points:g}"
        else:
            state = ("✓ " + escape(w["done"]) if not line.left
                     else "✗ " + escape(w["left"]) + ": " + escape("; ".join(line.left)))
            if line.changed:
                state += f"<br><small>{escape(w['changed'])}</small>"
            score = f"{line.earned:.1f}/{line.max_points:g}"
        rows.append(f"<tr><td><code>{escape(line.lab)}</code></td><td>{score}</td>"
                    f"<td style='text-align:left'>{state}</td></tr>")
    lesson_cells = "".join(
        f"<tr><td><code>{escape(line.lesson)}</code></td><td>{line.run}/{line.cells}"
        f"{' ✓' if line.done else ''}</td></tr>"
        for line in lesson_lines)
    return (f"<h3>{escape(w['title'])}</h3>"
            f"<p>{escape(_total(lab_lines, lesson_lines, w))}</p>"
            "<div style='display:flex;flex-wrap:wrap;gap:2em;align-items:flex-start'>"
            f"<table><tr><th>{escape(w['labs'])}</th><th></th><th></th></tr>{''.join(rows)}"
            f"</table><table><tr><th>{escape(w['lessons'])}</th><th></th></tr>{lesson_cells}"
            f"</table></div><p><small>{escape(w['how'])}</small></p>")


def show(lang: str = "en", root: Path | None = None):
    """The progress sheet as a widget with a refresh button (for the start page)."""
    import ipywidgets as widgets

    from .build import find_root

    course_root = find_root(root)
    page = widgets.HTML(html(course_root, lang))
    button = widgets.Button(description=_WORDS[lang]["refresh"], icon="refresh")

    def refresh(_button: object) -> None:
        page.value = html(course_root, lang)

    button.on_click(refresh)
    return widgets.VBox([button, page])
