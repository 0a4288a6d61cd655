"""Build ``notebooks/``, ``labs/`` and ``solutions/`` (both languages) from ``course/``.

Lessons and solutions are executed with nbclient (in parallel, one kernel per notebook, at
most ``jobs`` at a time) and their outputs stored; a lab is the student version of its
source, with no outputs except the graded cells, which carry the solution's output as the
expected one. The output is deterministic: fixed cell ids, no timings, no Python version,
outputs passed through ``course/sanitize.cfg``, so two builds are byte-identical and a test can
compare the committed trees with a fresh build.
"""

from __future__ import annotations

import asyncio
import copy
import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nbformat

from . import source as src

TREES = {"lesson": "notebooks", "student": "labs", "solution": "solutions"}
CELL_TIMEOUT = 120
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class BuildError(RuntimeError):
    pass


# --------------------------------------------------------------------------- locations


def find_root(start: Path | None = None) -> Path:
    """The course root: the nearest directory at or above ``start`` that has ``course/``."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "course" / "lessons").is_dir():
            return candidate
    package_root = Path(__file__).resolve().parents[2]
    if (package_root / "course" / "lessons").is_dir():
        return package_root
    raise BuildError(f"no course/ directory at or above {here}")


def sanitize_patterns(root: Path) -> list[tuple[str, str]]:
    """The (regex, replacement) pairs of course/sanitize.cfg, parsed the way nbval does."""
    path = root / "course" / "sanitize.cfg"
    if not path.exists():
        return []
    return re.findall(r"^regex: (.*)$\n^replace: (.*)$", path.read_text(), flags=re.MULTILINE)


@contextmanager
def ipython_dir(root: Path):
    """A throwaway IPYTHONDIR whose default profile is course/ipython_config.py.

    Kernels write history, pid and security files into their profile; a temporary copy keeps
    those out of the repository.
    """
    with tempfile.TemporaryDirectory(prefix="mcpkit-ipython-") as tmp:
        profile = Path(tmp) / "profile_default"
        profile.mkdir()
        config = root / "course" / "ipython_config.py"
        if config.exists():
            shutil.copyfile(config, profile / "ipython_config.py")
        yield tmp


# --------------------------------------------------------------------------- outputs


def _sanitize_text(text: str, patterns: list[tuple[str, str]]) -> str:
    for regex, replace in patterns:
        text = re.sub(regex, replace, text)
    return text


def clean_outputs(nb: nbformat.NotebookNode, patterns: list[tuple[str, str]]) -> None:
    """Make executed outputs machine-independent: sanitize text, strip colour and widgets."""
    nb.metadata.pop("widgets", None)
    nb.metadata["language_info"] = copy.deepcopy(src.LANGUAGE_INFO)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.metadata.pop("execution", None)
        merged: list = []
        for out in cell.outputs:
            if out.output_type == "stream":
                out.text = _sanitize_text(out.text, patterns)
                if merged and merged[-1].output_type == "stream" and merged[-1].name == out.name:
                    merged[-1].text += out.text
                    continue
            elif out.output_type in ("execute_result", "display_data"):
                out.data.pop(_WIDGET_VIEW, None)
                for mime, value in list(out.data.items()):
                    if isinstance(value, str) and mime.startswith("text/"):
                        out.data[mime] = _sanitize_text(value, patterns)
            elif out.output_type == "error":
                out.evalue = _sanitize_text(out.evalue, patterns)
                out.traceback = [_sanitize_text(_ANSI.sub("", line), patterns)
                                 for line in out.traceback]
            merged.append(out)
        cell.outputs = merged


#: The comment a lab's graded cell opens with, per language: the solution's success line.
EXPECTED_COMMENT = {"en": "# Expected once every check passes:",
                    "es": "# Lo esperado cuando pasan todas las comprobaciones:"}


def expected_line(cell: nbformat.NotebookNode) -> str:
    """The first line an executed graded cell printed (its ``✓ N/N`` line)."""
    text = "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")
    return text.splitlines()[0] if text else ""


def student_from(student: nbformat.NotebookNode, solution: nbformat.NotebookNode) -> None:
    """Tell each graded cell of ``student`` what the solution's run of it printed.

    The line goes into a comment at the top of the cell, not into its outputs: a cell that
    shows an execution count and a success line before anything ran looks already passed.
    The cell stays unexecuted (no outputs, no count); ``metadata.mcpkit.checks`` keeps the
    number of checks for the grader (metadata is the same in both languages, the line is not).
    """
    executed = {cell.id: cell for cell in solution.cells}
    lang = student.metadata.get("mcpkit", {}).get("lang", "en")
    for cell in student.cells:
        if cell.cell_type == "code" and "graded" in cell.metadata.get("tags", []):
            line = expected_line(executed[cell.id])
            checks = re.match(r"[✓✗] \d+/(\d+) ", line)
            if checks is None:
                raise BuildError(f"graded cell {cell.id} printed no ✓ N/N line")
            cell.metadata.setdefault("mcpkit", {})
            cell.metadata["mcpkit"]["checks"] = int(checks.group(1))
            cell.source = f"{EXPECTED_COMMENT[lang]} {line}\n{cell.source}"
            cell.outputs = []
            cell.execution_count = None


def dumps(nb: nbformat.NotebookNode) -> str:
    nbformat.validate(nb)
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


# --------------------------------------------------------------------------- execution


def _current_env_kernel():
    """A kernel manager that runs this very Python, whatever kernelspecs are installed."""
    import ipykernel.kernelspec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    class CurrentEnv(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str):
            return self.kernel_spec_class(resource_dir=ipykernel.kernelspec.RESOURCES,
                                          **ipykernel.kernelspec.get_kernel_dict())

    return AsyncKernelManager(kernel_name="python3", kernel_spec_manager=CurrentEnv())


async def _execute(nb: nbformat.NotebookNode, cwd: Path, name: str) -> None:
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    km = _current_env_kernel()
    client = NotebookClient(
        nb,
        km=km,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
        record_timing=False,
        shutdown_kernel="immediate",
        coalesce_streams=True,
    )
    try:
        await client.async_execute()
    except CellExecutionError as exc:
        raise BuildError(f"{name}: a cell failed while building\n{exc}") from None
    finally:
        # nbclient shuts down only the kernels it made itself: this one is ours to end (a
        # build inside a long process, the suite's, otherwise keeps every kernel it started).
        if km.has_kernel:
            await km.shutdown_kernel(now=True)
        # Nor does it close the client's channels to a kernel it did not start: their sockets,
        # and zmq's own threads, would go on reconnecting to the dead kernel's ports.
        if client.kc is not None:
            client.kc.stop_channels()
        km.context.destroy(linger=0)


@dataclass
class Job:
    """One notebook to execute and where its results go."""

    nb: nbformat.NotebookNode
    target: Path
    student: nbformat.NotebookNode | None = None  # written next to a solution
    student_target: Path | None = None


def plan(root: Path, out: Path, only: Iterable[str] = ()) -> list[Job]:
    """Render every source (or those named in ``only``) in both languages."""
    wanted = set(only)
    jobs: list[Job] = []
    for source in src.discover(root / "course"):
        if wanted and source.stem not in wanted:
            continue
        nb_source = src.read_source(source.path)
        origin = source.path.relative_to(root).as_posix()
        variants: tuple[src.Variant, ...] = (
            ("lesson",) if source.kind == "lesson" else ("solution", "student"))
        rendered = {
            (lang, v): src.render(nb_source, source.stem, lang, v, source.kind, origin)
            for lang in src.LANGS for v in variants
        }
        for v in variants:
            src.check_parity({lang: rendered[lang, v] for lang in src.LANGS}, origin)
        for lang in src.LANGS:
            if source.kind == "lesson":
                jobs.append(Job(rendered[lang, "lesson"],
                                out / TREES["lesson"] / lang / f"{source.stem}.ipynb"))
            else:
                jobs.append(Job(
                    rendered[lang, "solution"],
                    out / TREES["solution"] / lang / f"{source.stem}.ipynb",
                    student=rendered[lang, "student"],
                    student_target=out / TREES["student"] / lang / f"{source.stem}.ipynb",
                ))
    if wanted - {job.target.stem for job in jobs}:
        missing = ", ".join(sorted(wanted - {job.target.stem for job in jobs}))
        raise BuildError(f"no course source named {missing}")
    return jobs


async def _run_all(jobs: list[Job], patterns: list[tuple[str, str]], parallel: int) -> None:
    gate = asyncio.Semaphore(parallel)

    async def one(job: Job) -> None:
        job.target.parent.mkdir(parents=True, exist_ok=True)
        unexecuted = copy.deepcopy(job.nb)
        for attempt in (1, 2):
            try:
                async with gate:
                    await _execute(job.nb, job.target.parent, job.target.as_posix())
                break
            except BuildError:  # a cell failed: that is the source's fault, not the kernel's
                raise
            except Exception as exc:  # the kernel died or never answered: one fresh start
                if attempt == 2:
                    raise
                # Said, not hidden: a retried notebook costs the build up to CELL_TIMEOUT, and
                # a cell that stalls under load is worth finding (pytest lists warnings).
                warnings.warn(f"{job.target.name}: {type(exc).__name__}: {exc}"[:300]
                              + "; built once more, in a fresh kernel", RuntimeWarning,
                              stacklevel=1)
                job.nb = copy.deepcopy(unexecuted)
        clean_outputs(job.nb, patterns)
        job.target.write_text(dumps(job.nb), encoding="utf-8")
        if job.student is not None and job.student_target is not None:
            student_from(job.student, job.nb)
            job.student_target.parent.mkdir(parents=True, exist_ok=True)
            job.student_target.write_text(dumps(job.student), encoding="utf-8")

    results = await asyncio.gather(*(one(job) for job in jobs), return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        raise BuildError("\n\n".join(str(e) for e in errors))


def build(root: Path | None = None, out: Path | None = None, jobs: int | None = None,
          only: Iterable[str] = ()) -> list[Path]:
    """Regenerate the three trees; return the paths written.

    ``out`` defaults to ``root``; building elsewhere (a temporary directory) is how the tests
    check that the committed trees are up to date. Without ``only``, notebooks in the trees
    that no source produces any more are removed.
    """
    root = find_root(root)
    out = (out or root).resolve()
    only = list(only)
    planned = plan(root, out, only)
    parallel = max(1, jobs or min(4, os.cpu_count() or 1))
    with ipython_dir(root) as ipdir:
        previous = os.environ.get("IPYTHONDIR")
        os.environ["IPYTHONDIR"] = ipdir  # inherited by every kernel we start
        try:
            asyncio.run(_run_all(planned, sanitize_patterns(root), parallel))
        finally:
            if previous is None:
                os.environ.pop("IPYTHONDIR", None)
            else:
                os.environ["IPYTHONDIR"] = previous
    written = [job.target for job in planned]
    written += [job.student_target for job in planned if job.student_target is not None]
    if not only:
        for tree in TREES.values():
            for lang in src.LANGS:
                for stale in (out / tree / lang).glob("*.ipynb"):
                    if stale not in written:
                        stale.unlink()
    return sorted(written)


def compare_trees(a: Path, b: Path) -> list[str]:
    """Relative paths of notebooks that differ between two roots (or exist in only one)."""
    differ: list[str] = []
    for tree in TREES.values():
        for lang in src.LANGS:
            names = {p.name for p in (a / tree / lang).glob("*.ipynb")}
            names |= {p.name for p in (b / tree / lang).glob("*.ipynb")}
            for name in sorted(names):
                pa, pb = a / tree / lang / name, b / tree / lang / name
                if not (pa.exists() and pb.exists()) or pa.read_bytes() != pb.read_bytes():
                    differ.append(f"{tree}/{lang}/{name}")
    return differ


def _shown(value, limit: int = 160) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _cell_outputs(cell: nbformat.NotebookNode) -> str:
    """A cell's outputs as text, one output after another (what a diff is read against)."""
    lines: list[str] = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            lines.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            lines.extend(f"{mime}: {value}" for mime, value in sorted(out.data.items()))
        elif out.output_type == "error":
            lines.append(f"{out.ename}: {out.evalue}")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def differing_cells(a: Path, b: Path) -> list[str]:
    """Where two roots' notebooks differ, one line per cell: notebook, cell id, first line that
    differs (``a`` then ``b``). A notebook that differs elsewhere (metadata, a missing file) is
    named on its own line."""
    found: list[str] = []
    for rel in compare_trees(a, b):
        pa, pb = a / rel, b / rel
        if not (pa.exists() and pb.exists()):
            found.append(f"{rel}: only in {a if pa.exists() else b}")
            continue
        na, nb = (nbformat.reads(p.read_text(encoding="utf-8"), as_version=4) for p in (pa, pb))
        cells_a = {cell.get("id"): cell for cell in na.cells}
        cells_b = {cell.get("id"): cell for cell in nb.cells}
        before = len(found)
        for cell_id in [*cells_a, *(i for i in cells_b if i not in cells_a)]:
            ca, cb = cells_a.get(cell_id), cells_b.get(cell_id)
            if ca is None or cb is None:
                found.append(f"{rel} cell {cell_id}: only in {a if cb is None else b}")
            elif ca != cb:
                if ca.get("source") != cb.get("source"):
                    what, ta, tb = "source", ca.get("source", ""), cb.get("source", "")
                elif ca.get("outputs") != cb.get("outputs"):
                    what, ta, tb = "output", _cell_outputs(ca), _cell_outputs(cb)
                else:
                    what, ta, tb = "metadata", repr(dict(ca.metadata)), repr(dict(cb.metadata))
                la, lb = ta.splitlines() or [""], tb.splitlines() or [""]
                at = next((i for i, (x, y) in enumerate(zip(la, lb, strict=False)) if x != y),
                          min(len(la), len(lb)))
                la.append("(end)")
                lb.append("(end)")
                found.append(f"{rel} cell {cell_id}: {what} differs at line {at + 1}: "
                             f"{_shown(la[at])!r} vs {_shown(lb[at])!r}")
        if len(found) == before:
            found.append(f"{rel}: notebook metadata or cell order differs")
    return found
