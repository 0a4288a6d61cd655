"""Grades in the shapes a gradebook takes: per-learner totals, and a Canvas import file.

The per-lab CSV and the JUnit report (:mod:`mcpkit.course.grade`) say everything about one
learner and one lab; an LMS wants one row per learner and one column per assignment.

Canvas's gradebook import (Grades > Import) reads a CSV whose first columns are ``Student``,
``ID``, ``SIS User ID``, ``SIS Login ID`` and ``Section`` (a student is matched by ``ID``,
``SIS User ID`` or ``SIS Login ID``), then one column per assignment: a header Canvas knows
(its export writes ``Name (id)``) updates that assignment, any other header makes a new one.
An optional second row, ``Points Possible``, gives each assignment's maximum. Given the
course's gradebook as Canvas exported it (``--roster``), learners are matched to its rows by
SIS Login ID, then SIS User ID, then ID (a hub's user name is usually the university login),
and a lab's column takes the header of the exported assignment whose name holds the lab's
stem (``lab01_framing``); without one, each learner's SIS Login ID is their folder's name.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from .grade import Row, as_text

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "Points Possible"


def _table(rows: list[Row]) -> tuple[list[str], dict[str, float], dict[str, dict[str, Row]]]:
    """The learners, each lab's maximum points, and learner -> lab -> row."""
    learners = sorted({r.learner for r in rows})
    maxima = {r.lab: r.max_points for r in sorted(rows, key=lambda r: r.lab)}
    by: dict[str, dict[str, Row]] = {learner: {} for learner in learners}
    for r in rows:
        by[r.learner][r.lab] = r
    return learners, maxima, by


def write_totals(rows: list[Row], path: Path) -> None:
    """One row per learner: points per lab, the total, labs with every check passed, and how
    many labs were handed in late (when a deadline was given)."""
    learners, maxima, by = _table(rows)
    labs = list(maxima)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["learner", *labs, "total", "max_total", "labs_complete", "late_labs"])
        for learner in learners:
            mine = by[learner]
            points = [mine[lab].points if lab in mine else 0.0 for lab in labs]
            writer.writerow([
                as_text(learner), *(f"{p:.2f}" for p in points), f"{sum(points):.2f}",
                f"{sum(maxima.values()):g}",
                sum(1 for lab in labs if lab in mine and mine[lab].status == "passed"),
                sum(1 for lab in labs if lab in mine and mine[lab].late)])


def _read_roster(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with Path(path).open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = list(reader.fieldnames or [])
        missing = [c for c in CANVAS_IDENTITY if c not in header]
        if missing:
            raise ValueError(f"{path}: not a Canvas gradebook export (no column "
                             f"{', '.join(missing)})")
        names = ((r, (r.get("Student") or "").strip()) for r in reader)
        students = [r for r, name in names
                    if name and POINTS_POSSIBLE not in name and name != "Test Student"]
    return header, students


def write_canvas(rows: list[Row], path: Path, roster: Path | None = None) -> list[str]:
    """Write a Canvas gradebook import file; return the learners it could not place (with a
    roster: folders no student of the roster matches; they are left out, and named)."""
    learners, maxima, by = _table(rows)
    labs = list(maxima)
    header = {lab: lab for lab in labs}
    identities: dict[str, dict[str, str]] = {}
    unplaced: list[str] = []
    if roster is not None:
        exported, students = _read_roster(roster)
        for lab in labs:
            known = [h for h in exported if lab in h and h not in CANVAS_IDENTITY]
            if known:
                header[lab] = known[0]
        for learner in learners:
            match = next((s for key in ("SIS Login ID", "SIS User ID", "ID") for s in students
                          if (s.get(key) or "").strip() == learner), None)
            if match is None:
                unplaced.append(learner)
            else:
                identities[learner] = {c: match.get(c) or "" for c in CANVAS_IDENTITY}
    else:
        identities = {learner: {"Student": learner, "ID": "", "SIS User ID": "",
                                "SIS Login ID": learner, "Section": ""}
                      for learner in learners}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow([*CANVAS_IDENTITY, *(header[lab] for lab in labs)])
        writer.writerow([POINTS_POSSIBLE, "", "", "", "", *(f"{maxima[lab]:g}" for lab in labs)])
        for learner in learners:
            if learner not in identities:
                continue
            mine = by[learner]
            writer.writerow([*(identities[learner][c] for c in CANVAS_IDENTITY),
                             *(f"{mine[lab].points:.2f}" if lab in mine else "0.00"
                               for lab in labs)])
    for learner in unplaced:
        print(f"warning: {learner}: no student of the roster has this SIS Login ID, SIS User "
              "ID or ID; left out of the Canvas file", file=sys.stderr)
    return unplaced
