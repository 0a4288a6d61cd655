"""Handing labs in: the exchange folder a class shares, and reading it back for grading.

Layout (what ``./course.sh submit labNN --to DIR`` writes, what ``mcpkit-course grade DIR``
reads)::

    DIR/
        ana/lab01_framing/20261202T143005.120301Z.ipynb     one file per hand-in
        ana/lab01_framing/20261203T091500.000004Z.ipynb     (the latest one is graded)
        bruno/lab01_framing.ipynb                           collected by hand: also read

Theory of operation
-------------------
A hand-in is a copy, never a move: the learner keeps working. It is written under a temporary
name in the learner's folder and renamed, so a grader reading the folder at the same moment
never sees half a notebook. Its name is the time it was handed in (UTC, to the microsecond),
which is what a deadline is compared with; like nbgrader's exchange, this trusts the hub's
file system (a learner who can write the folder could write any name there), so an
instructor who needs more collects the folder at the deadline.

``submit`` refuses, saying what to do, when the lab was never graded (``./course.sh grade``
first), when the notebook changed since its last grade, and when the exchange folder is
missing or not writable; nothing is written then.
"""

from __future__ import annotations

import getpass
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

STAMP = "%Y%m%dT%H%M%S.%fZ"
_STAMP = re.compile(r"\d{8}T\d{6}\.\d{6}Z")
# A learner's folder name: what hubs use as user names, nothing that walks out of DIR.
_LEARNER = re.compile(r"[A-Za-z0-9@+_-][A-Za-z0-9@+._-]{0,127}")

_SAY = {
    "en": {
        "never": "{lab} was never graded: run ./course.sh grade {short} first (the grade is "
                 "what you hand in), then submit again",
        "changed": "{lab} changed since you graded it ({when}): run ./course.sh grade {short} "
                   "again, then submit again",
        "no_dir": "no exchange folder {dir}: check the path your instructor gave you",
        "not_writable": "cannot write into the exchange folder {dir} ({why}): ask your "
                        "instructor",
        "bad_name": "{name!r} cannot name a learner's folder: use letters, digits and "
                    "@ + . _ - (--as NAME)",
        "done": "handed in {lab} as {learner}: {path}\n  its last grade: {earned:.1f}/{total:g} "
                "points ({when})",
    },
    "es": {
        "never": "{lab} todavía no se ha calificado: ejecuta primero ./course.sh grade {short} "
                 "(lo que entregas es la versión calificada) y luego intenta entregarlo de "
                 "nuevo",
        "changed": "{lab} cambió desde que lo calificaste ({when}): vuelve a ejecutar "
                   "./course.sh grade {short} y luego intenta entregarlo de nuevo",
        "no_dir": "no existe la carpeta de entregas {dir}: revisa la ruta que te dio tu "
                  "instructor/a",
        "not_writable": "no se puede escribir en la carpeta de entregas {dir} ({why}): "
                        "consulta a tu instructor/a",
        "bad_name": "{name!r} no sirve como nombre de la carpeta de un estudiante: usa "
                    "letras, dígitos y @ + . _ - (elige otro con --as NOMBRE)",
        "done": "{lab} entregado como {learner}: {path}\n  su última nota: {earned:.1f}/"
                "{total:g} puntos ({when})",
    },
}


class Refused(Exception):
    """A hand-in that was not made; the message says why and what to do."""


def learner_name() -> str:
    """Who is handing in: the hub's user name on a JupyterHub, else the login name."""
    return os.environ.get("JUPYTERHUB_USER") or getpass.getuser()


def submit(root: Path, notebook: Path, to: Path, learner: str | None = None,
           now: datetime | None = None) -> str:
    """Copy the learner's graded lab ``notebook`` into the exchange folder ``to``.

    Returns the report to print; raises :class:`Refused` (nothing written) when the lab was
    never graded, changed since its grade, or the folder is missing or not writable.
    """
    from . import progress
    from .grade import _lang_of
    from .workspace import Unreadable, read_copy

    try:
        nb = read_copy(notebook)
    except Unreadable as exc:
        raise Refused(str(exc)) from None
    lang = _lang_of(nb)
    say = _SAY[lang]
    lab = Path(nb.metadata.get("mcpkit", {}).get("source", "") or notebook).stem
    short = lab.split("_")[0]
    learner = learner or learner_name()
    if not _LEARNER.fullmatch(learner):
        raise Refused(say["bad_name"].format(name=learner))
    graded = progress.load(root)["labs"].get(lab)
    if not graded or graded.get("notebook") != progress.relative_name(root, notebook):
        raise Refused(say["never"].format(lab=lab, short=short))
    when = progress.shown_time(graded["graded_at"])
    if progress.digest(nb) != graded.get("digest"):
        raise Refused(say["changed"].format(lab=lab, short=short, when=when))
    to = Path(to)
    if not to.is_dir():
        raise Refused(say["no_dir"].format(dir=to))
    folder = to / learner / lab
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".handing-in-", suffix=".tmp")
    except OSError as exc:
        raise Refused(say["not_writable"].format(dir=to, why=exc.strerror or exc)) from None
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime(STAMP)
    target = folder / f"{stamp}.ipynb"
    try:
        with os.fdopen(fd, "wb") as out, open(notebook, "rb") as source:
            shutil.copyfileobj(source, out)
        os.chmod(tmp, 0o644)  # readable by the instructor's account on a shared disk
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise Refused(say["not_writable"].format(dir=to, why=exc.strerror or exc)) from None
    earned = sum(p["earned"] for p in graded["parts"])
    total = sum(p["points"] for p in graded["parts"])
    return say["done"].format(lab=lab, learner=learner, path=target, earned=earned,
                              total=total, when=when)


@dataclass
class Submission:
    path: Path
    at: datetime | None  # when it was handed in (None: collected by hand, no time known)


def stamp_of(name: str) -> datetime | None:
    if not _STAMP.fullmatch(name):
        return None
    return datetime.strptime(name, STAMP).replace(tzinfo=UTC)


def latest(submissions: Path, labs: set[str]) -> dict[str, dict[str, Submission]]:
    """learner -> lab -> the submission to grade: the latest hand-in of each learner and lab
    (``DIR/<learner>/<lab>/<time>.ipynb``), or ``DIR/<learner>/<lab>.ipynb`` when there is
    none. Anything else in the folder is named on stderr and left out."""
    found: dict[str, dict[str, Submission]] = {}
    for learner_dir in sorted(p for p in Path(submissions).iterdir() if p.is_dir()):
        if learner_dir.name.startswith("."):
            continue
        mine = found.setdefault(learner_dir.name, {})
        for entry in sorted(learner_dir.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_file() and entry.suffix == ".ipynb" and entry.stem in labs:
                mine.setdefault(entry.stem, Submission(entry, None))
            elif entry.is_dir() and entry.name in labs:
                handed = [(at, p) for p in entry.glob("*.ipynb")
                          if (at := stamp_of(p.stem)) is not None]
                strays = [p for p in entry.iterdir()
                          if not p.name.startswith(".") and stamp_of(p.stem) is None]
                for stray in strays:
                    print(f"warning: ignoring {stray} (not a hand-in's name)", file=sys.stderr)
                if handed:
                    at, path = max(handed)
                    mine[entry.name] = Submission(path, at)
            else:
                print(f"warning: ignoring {entry} (not a lab of this course)", file=sys.stderr)
    return found


def parse_deadline(text: str) -> datetime:
    """An ISO 8601 date and time; without an offset it is the grading machine's local time."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"--deadline {text!r}: give an ISO 8601 time, e.g. "
                         "2026-12-10T23:59 or 2026-12-10T23:59+01:00") from None
    return when.astimezone(UTC) if when.tzinfo else when.astimezone().astimezone(UTC)
