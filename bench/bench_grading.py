"""Class grading throughput: submissions graded per minute, with one and two sandboxes.

    python bench/bench_grading.py [--learners 4] [--labs lab01_framing,lab02_jsonrpc] [--rounds 2]

A class of ``--learners`` learners, each handing in every lab (the solution notebooks of
``solutions/en``, which pass, and the unfilled ones of ``labs/en``, which fail, half and
half: failing cases cost more, they collect reports), is graded by ``mcpkit-course grade``
with ``--jobs 1`` and ``--jobs 2``. A submission is one learner's notebook of one lab.

The baseline is what self-grading costs: running the solution notebook top to bottom in a
Jupyter kernel (nbclient), as ``pytest --nbval-lax`` does, once per submission. Class
grading runs only the exercise cells, each graded cell in a fresh sandboxed process, with
four times the notebook's generated cases.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COURSE = [str(ROOT / ".venv" / "bin" / "mcpkit-course")] if (
    ROOT / ".venv" / "bin" / "mcpkit-course").exists() else [sys.executable, "-m",
                                                             "mcpkit.course.cli"]


def make_class(folder: Path, labs: list[str], learners: int) -> int:
    for n in range(learners):
        learner = folder / f"learner{n:02d}"
        learner.mkdir()
        tree = "solutions" if n % 2 == 0 else "labs"
        for lab in labs:
            shutil.copy(ROOT / tree / "en" / f"{lab}.ipynb", learner / f"{lab}.ipynb")
    return learners * len(labs)


def grade(folder: Path, jobs: int) -> float:
    out = folder.parent / f"grades-{jobs}.csv"
    began = time.perf_counter()
    subprocess.run([*COURSE, "grade", str(folder), "--out", str(out), "--jobs", str(jobs),
                    "--seed", "1"], check=True, cwd=ROOT, capture_output=True)
    return time.perf_counter() - began


def run_notebook(lab: str) -> float:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "solutions" / "en" / f"{lab}.ipynb", as_version=4)
    began = time.perf_counter()
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(ROOT / "solutions" / "en")}}).execute()
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=4)
    parser.add_argument("--labs", default=",".join(
        sorted(p.stem for p in (ROOT / "labs" / "en").glob("lab*.ipynb"))))
    parser.add_argument("--rounds", type=int, default=2)
    options = parser.parse_args()
    labs = options.labs.split(",")
    per_minute: dict[str, list[float]] = {"nbclient, whole notebook": [], "--jobs 1": [],
                                          "--jobs 2": []}
    for round_ in range(options.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp, "class")
            folder.mkdir()
            submissions = make_class(folder, labs, options.learners)
            notebook_s = sum(run_notebook(lab) for lab in labs)
            per_minute["nbclient, whole notebook"].append(len(labs) / notebook_s * 60)
            for jobs in (1, 2):
                seconds = grade(folder, jobs)
                per_minute[f"--jobs {jobs}"].append(submissions / seconds * 60)
                print(f"round {round_ + 1}: --jobs {jobs}: {submissions} submissions in "
                      f"{seconds:.1f} s", file=sys.stderr)
    base = statistics.median(per_minute["nbclient, whole notebook"])
    print(f"{len(labs)} labs, {options.learners} learners, {options.rounds} rounds "
          "(medians, min-max)\n")
    print("| grading | submissions/min | vs nbclient |")
    print("| --- | ---: | ---: |")
    for name, values in per_minute.items():
        med = statistics.median(values)
        print(f"| {name} | {med:.0f} ({min(values):.0f}-{max(values):.0f}) | "
              f"{med / base:.2f}x |")


if __name__ == "__main__":
    main()
