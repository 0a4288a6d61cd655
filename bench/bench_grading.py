"""Class grading throughput: submissions graded per minute, with one and two sandboxes, and
what that means for a large class.

    python bench/bench_grading.py [--learners 4] [--labs lab01_framing,lab02_jsonrpc]
                                  [--rounds 2] [--no-baseline] [--class-size 500x10 --cores 16]

A class of ``--learners`` learners hands every lab in to an exchange folder, as
``./course.sh submit`` lays it out: an unfilled lab first, then the final one (the solution
notebooks of ``solutions/en``, which pass, and the unfilled ones of ``labs/en``, which fail,
half and half: failing cases cost more, they collect reports). ``mcpkit-course grade`` grades
the latest hand-in of each learner and lab with ``--jobs 1`` and ``--jobs 2``. A submission
is one learner's notebook of one lab. The CPU time of the grader and its sandboxes (their
rusage) is reported per submission too.

The projection for ``--class-size`` (learners x labs) on ``--cores`` cores with ``--jobs``
equal to the cores assumes the parallel efficiency measured from 1 to 2 jobs holds (grading
is processes, no shared state but the folder) and checks it against the CPU bound: cores
times 60 s divided by the CPU seconds a submission takes.

The baseline is what self-grading costs: running the solution notebook top to bottom in a
Jupyter kernel (nbclient), as ``pytest --nbval-lax`` does, once per submission. Class
grading runs only the exercise cells, each graded cell in a fresh sandboxed process, with
four times the notebook's generated cases.
"""

from __future__ import annotations

import argparse
import resource
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
        final = "solutions" if n % 2 == 0 else "labs"
        for lab in labs:
            mine = folder / f"learner{n:02d}" / lab
            mine.mkdir(parents=True)
            shutil.copy(ROOT / "labs" / "en" / f"{lab}.ipynb",
                        mine / "20261201T090000.000000Z.ipynb")
            shutil.copy(ROOT / final / "en" / f"{lab}.ipynb",
                        mine / "20261201T100000.000000Z.ipynb")
    return learners * len(labs)


def grade(folder: Path, jobs: int) -> tuple[float, float]:
    """Wall seconds, and CPU seconds of the grader and everything it ran."""
    out = folder.parent / f"grades-{jobs}.csv"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run([*COURSE, "grade", str(folder), "--out", str(out), "--jobs", str(jobs),
                    "--seed", "1"], check=True, cwd=ROOT, capture_output=True)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


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
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip running the notebooks in a kernel")
    parser.add_argument("--class-size", default="500x10", help="learners x labs to project")
    parser.add_argument("--cores", type=int, default=16, help="cores to project for")
    options = parser.parse_args()
    labs = options.labs.split(",")
    per_minute: dict[str, list[float]] = {"--jobs 1": [], "--jobs 2": []}
    if not options.no_baseline:
        per_minute = {"nbclient, whole notebook": [], **per_minute}
    cpu_per_submission: list[float] = []
    for round_ in range(options.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp, "class")
            folder.mkdir()
            submissions = make_class(folder, labs, options.learners)
            if not options.no_baseline:
                notebook_s = sum(run_notebook(lab) for lab in labs)
                per_minute["nbclient, whole notebook"].append(len(labs) / notebook_s * 60)
            for jobs in (1, 2):
                seconds, cpu = grade(folder, jobs)
                per_minute[f"--jobs {jobs}"].append(submissions / seconds * 60)
                if jobs == 1:
                    cpu_per_submission.append(cpu / submissions)
                print(f"round {round_ + 1}: --jobs {jobs}: {submissions} submissions in "
                      f"{seconds:.1f} s ({cpu:.1f} CPU s)", file=sys.stderr)
    base = statistics.median(next(iter(per_minute.values())))
    print(f"{len(labs)} labs, {options.learners} learners, {options.rounds} rounds "
          "(medians, min-max)\n")
    print(f"| grading | submissions/min | vs {next(iter(per_minute))} |")
    print("| --- | ---: | ---: |")
    for name, values in per_minute.items():
        med = statistics.median(values)
        print(f"| {name} | {med:.0f} ({min(values):.0f}-{max(values):.0f}) | "
              f"{med / base:.2f}x |")
    one = statistics.median(per_minute["--jobs 1"])
    two = statistics.median(per_minute["--jobs 2"])
    efficiency = two / (2 * one)
    cpu = statistics.median(cpu_per_submission)
    learners, class_labs = (int(x) for x in options.class_size.split("x"))
    total = learners * class_labs
    scaled = one * options.cores * efficiency
    bound = 60 * options.cores / cpu
    rate = min(scaled, bound)
    print(f"\nCPU per submission (--jobs 1): {cpu:.2f} s; efficiency from 1 to 2 jobs: "
          f"{efficiency:.2f}")
    print(f"{learners} learners x {class_labs} labs = {total} submissions on {options.cores} "
          f"cores with --jobs {options.cores}: {scaled:.0f}/min at that efficiency, "
          f"{bound:.0f}/min CPU bound -> about {total / rate:.0f} min")


if __name__ == "__main__":
    main()
