"""``mcpkit-course``: regenerate the course notebooks, check they are current, grade labs.

    mcpkit-course build [--jobs N] [--only STEM ...] [--check]
    mcpkit-course grade SUBMISSIONS --out grades.csv [--junit report.xml] [--jobs N]
                        [--timeout S] [--seed N] [--scale K] [--deadline TIME]
                        [--totals totals.csv] [--canvas canvas.csv [--roster export.csv]]
    mcpkit-course check LAB [--all]  (a learner's own lab: ./course.sh grade LAB)
    mcpkit-course progress [--lang en|es]          (./course.sh progress)
    mcpkit-course submit LAB --to DIR [--as NAME]  (./course.sh submit LAB --to DIR)
    mcpkit-course workspace          (make the learner's working copies under work/)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path


def _build(args: argparse.Namespace) -> int:
    from .build import build, differing_cells, find_root

    root = find_root(args.root)
    started = time.monotonic()
    if args.check:
        with tempfile.TemporaryDirectory(prefix="mcpkit-course-") as tmp:
            build(root, out=Path(tmp), jobs=args.jobs)
            differ = differing_cells(root, Path(tmp))
        if differ:
            print("out of date (run `mcpkit-course build`):", *differ, sep="\n  ")
            return 1
        print(f"up to date ({time.monotonic() - started:.1f} s)")
        return 0
    written = build(root, out=args.out, jobs=args.jobs, only=args.only)
    print(f"wrote {len(written)} notebooks in {time.monotonic() - started:.1f} s")
    return 0


def _grade(args: argparse.Namespace) -> int:
    from .build import find_root
    from .exchange import parse_deadline
    from .grade import GraderChanged, grade, write_csv
    from .gradebook import write_canvas, write_totals

    root = find_root(args.root)
    if not args.submissions.is_dir():
        print(f"{args.submissions}: no such folder", file=sys.stderr)
        return 2
    if args.roster and not args.canvas:
        print("--roster goes with --canvas", file=sys.stderr)
        return 2
    try:
        deadline = parse_deadline(args.deadline) if args.deadline else None
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    junit = args.junit or args.out.with_suffix(".junit.xml")
    try:
        rows = grade(args.submissions, root=root, junit=junit, jobs=args.jobs,
                     timeout=args.timeout, seed=args.seed, scale=args.scale, deadline=deadline)
    except GraderChanged as exc:
        print(exc, file=sys.stderr)
        return 1
    write_csv(rows, args.out)
    written = [args.out, junit]
    if args.totals:
        write_totals(rows, args.totals)
        written.append(args.totals)
    if args.canvas:
        try:
            write_canvas(rows, args.canvas, roster=args.roster)
        except (OSError, ValueError) as exc:
            print(f"--roster: {exc}", file=sys.stderr)
            return 2
        written.append(args.canvas)
    for row in rows:
        late = " late" if row.late else ""
        print(f"{row.learner:<20} {row.lab:<20} {row.status:<10} "
              f"{row.checks_passed:>3}/{row.checks_total:<3} {row.points:>6.2f}/{row.max_points:g}"
              f"{late}")
    if deadline is not None:
        print(f"deadline {deadline:%Y-%m-%d %H:%M:%S} UTC")
    print(f"hidden seed {rows[0].seed if rows else '-'}; wrote "
          + ", ".join(str(p) for p in written))
    return 0


def _check(args: argparse.Namespace) -> int:
    from .build import find_root
    from .grade import check_one, format_parts
    from .progress import record_grade
    from .workspace import Unreadable, find_lab, read_copy

    root = find_root(args.root)
    try:
        path = find_lab(root, args.lab)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    try:
        nb = read_copy(path)  # once: what is graded is what the record's digest describes
    except Unreadable as exc:
        print(exc, file=sys.stderr)
        return 2
    try:
        lang, parts = check_one(path, root, timeout=args.timeout, nb=nb, every_detail=args.all)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    try:
        shown = path.resolve().relative_to(root)
    except ValueError:
        shown = path
    print(f"{shown}")
    print(format_parts(path.stem, lang, parts, show_all=args.all))
    record_grade(root, path, nb, path.stem, lang, parts)
    return 0 if all(p.graded.passed == p.graded.total for p in parts) else 1


def _progress(args: argparse.Namespace) -> int:
    from .build import find_root
    from .progress import guess_lang, text

    root = find_root(args.root)
    print(text(root, args.lang or guess_lang(root)))
    return 0


def _submit(args: argparse.Namespace) -> int:
    from .build import find_root
    from .exchange import Refused, submit
    from .workspace import find_lab

    root = find_root(args.root)
    try:
        path = find_lab(root, args.lab)
        print(submit(root, path, args.to, learner=args.learner))
    except (FileNotFoundError, Refused) as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


def _workspace(args: argparse.Namespace) -> int:
    from .build import find_root
    from .workspace import WORK, make

    root = find_root(args.root)
    created = make(root)
    if created:
        print(f"made {len(created)} working copies under {WORK}/", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mcpkit-course", description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=None,
                        help="course root (default: nearest directory with course/)")
    sub = parser.add_subparsers(dest="command", required=True)

    b = sub.add_parser("build", help="regenerate notebooks/, labs/ and solutions/ (en, es)")
    b.add_argument("--out", type=Path, default=None, help="write the trees here instead")
    b.add_argument("--jobs", type=int, default=None, help="notebooks executed at once")
    b.add_argument("--only", nargs="+", default=[], metavar="STEM",
                   help="build only these sources (e.g. lab01_framing)")
    b.add_argument("--check", action="store_true",
                   help="build into a temporary directory and fail if the trees differ")
    b.set_defaults(func=_build)

    g = sub.add_parser("grade", help="grade SUBMISSIONS/<learner>/<lab>.ipynb (exercise code "
                       "only, in sandbox processes, with hidden cases)")
    g.add_argument("submissions", type=Path)
    g.add_argument("--out", type=Path, required=True, help="CSV file to write")
    g.add_argument("--junit", type=Path, default=None,
                   help="JUnit XML report (default: next to --out, .junit.xml)")
    g.add_argument("--jobs", type=int, default=None, help="sandbox processes at once")
    g.add_argument("--timeout", type=int, default=60, help="seconds per graded cell")
    g.add_argument("--seed", type=int, default=None,
                   help="seed of the hidden cases (default: drawn at random, printed)")
    g.add_argument("--scale", type=int, default=None,
                   help="generated cases, as a multiple of the notebook's (default 4)")
    g.add_argument("--deadline", default=None, metavar="TIME",
                   help="mark hand-ins after TIME late (ISO 8601; local time without an "
                   "offset)")
    g.add_argument("--totals", type=Path, default=None,
                   help="also write one row per learner: points per lab and the total")
    g.add_argument("--canvas", type=Path, default=None,
                   help="also write a Canvas gradebook import CSV")
    g.add_argument("--roster", type=Path, default=None,
                   help="the course's gradebook as Canvas exported it: learners matched by "
                   "SIS Login ID, labs to existing assignments")
    g.set_defaults(func=_grade)

    c = sub.add_parser("check", help="grade one of your own labs, per part (what "
                       "./course.sh grade runs)")
    c.add_argument("lab", help="lab01, lab01_framing, or a notebook path")
    c.add_argument("--timeout", type=int, default=60, help="seconds per graded cell")
    c.add_argument("--all", action="store_true",
                   help="show every failing check of a part, not only the most specific one")
    c.set_defaults(func=_check)

    p = sub.add_parser("progress", help="your last grade of every lab and part, and the "
                       "lessons you ran (what ./course.sh progress runs)")
    p.add_argument("--lang", choices=("en", "es"), default=None,
                   help="default: the language of the copy you saved last")
    p.set_defaults(func=_progress)

    s = sub.add_parser("submit", help="hand a graded lab in to an exchange folder (what "
                       "./course.sh submit runs)")
    s.add_argument("lab", help="lab01, lab01_framing, or a notebook path")
    s.add_argument("--to", type=Path, required=True, help="the class's exchange folder")
    s.add_argument("--as", dest="learner", default=None, metavar="NAME",
                   help="your folder's name there (default: your hub or login name)")
    s.set_defaults(func=_submit)

    w = sub.add_parser("workspace", help="make the learner's working copies under work/")
    w.set_defaults(func=_workspace)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
