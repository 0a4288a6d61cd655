"""The class grader's guard at run time: what exercise code does that no static scan sees.

:func:`mcpkit.grading.sandbox.scan` judges how exercise code is spelt; a name built at run
time (a string put together, a frame handed over by the standard library) is out of its
sight. This guard watches the process that runs one graded part (:mod:`mcpkit.course.isolate`)
as it runs.

Theory of operation
-------------------
:func:`install` adds an audit hook (PEP 578). A hook cannot be removed, so exercise code
cannot switch it off; it refuses an event by raising ``PermissionError`` and records a
:class:`~mcpkit.grading.sandbox.Problem`, which flags the part. Two kinds of event:

* **a frame, a code object, or every object the collector knows**, reached from exercise
  code itself: the Python frame that raised the event was compiled from a learner's cell
  (the sandbox compiles each cell under its cell id). From a frame, every caller's variables
  are in reach: the checks', their references, and their record of what passed. The
  standard library's own uses are not the learner's frame and go through (logging finds
  its caller with ``sys._getframe``; a namedtuple its module).
* **a file written, created, renamed or removed outside the temporary folder**, whoever asks:
  the checks write only there, so the grader's files (and every submission graded after
  this one) are out of reach; so is what holds mcpkit and Python, wherever it is (a clone
  inside the temporary folder too). It is recorded as the learner's when their code is on the
  stack.

The hook reads frames itself (``sys._getframe`` raises an event too): a flag keeps it from
judging its own reads.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from typing import Any

from .sandbox import Problem

#: Events that hand out frames, code or the collector's objects (``object.__getattr__`` is
#: raised for ``gi_frame``, ``tb_frame``, ``__code__`` and the like).
INTROSPECTION = frozenset("""
sys._getframe sys._current_frames sys.settrace sys.setprofile sys.addaudithook
object.__getattr__ gc.get_objects gc.get_referrers gc.get_referents function.__new__
code.__new__ ctypes.dlopen
""".split())
#: Events that change the file system: which of their arguments are paths, and which of those
#: a dir_fd is for (the argument after the paths, as ``os`` passes it).
PATH_EVENTS: dict[str, tuple[tuple[int, int | None], ...]] = {
    "os.remove": ((0, 1),), "os.rmdir": ((0, 1),), "os.mkdir": ((0, 2),),
    "os.rename": ((0, 2), (1, 3)), "os.link": ((0, 2), (1, 3)), "os.symlink": ((1, 2),),
    "os.truncate": ((0, None),), "os.chmod": ((0, 2),), "os.chown": ((0, 3),),
}
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


#: What the one hook of this process judges by: the learner's cell names and the problems
#: of the part now running (a worker may run several parts; a hook cannot be removed, so
#: the first install adds it and every install after it only hands it the new part).
_part: dict[str, Any] = {}


def install(learner_cells: Iterable[str]) -> list[Problem]:
    """Guard this process for one part; return the list the guard adds its problems to.

    ``learner_cells`` are the names the exercise cells were compiled under."""
    problems: list[Problem] = []
    first = not _part
    _part.update(cells=frozenset(learner_cells), problems=problems)
    if first:
        # What holds mcpkit (a checkout's root, with its labs, or site-packages) and Python
        # itself stay closed even when they sit inside the temporary folder (a clone in /tmp).
        home = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        closed = {os.path.realpath(p) for p in (home, sys.prefix, sys.base_prefix)}
        sys.addaudithook(_hook(os.path.realpath(tempfile.gettempdir()), closed))
    return problems


def _hook(temporary: str, closed: set[str]) -> Callable[[str, tuple], None]:
    busy = [False]

    def learners_frame(frames: int | None) -> tuple[str, int] | None:
        """The first learner's frame among the ``frames`` callers of the event (all: None)."""
        cells = _part["cells"]
        frame = sys._getframe(2)
        while frame is not None and (frames is None or frames > 0):
            if frame.f_code.co_filename in cells:
                return frame.f_code.co_filename, frame.f_lineno
            frame = frame.f_back
            frames = None if frames is None else frames - 1
        return None

    def outside(path: object, dir_fd: object) -> str | None:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return None  # a file descriptor: opened already, and checked when it was
        if isinstance(dir_fd, int) and dir_fd >= 0 and not os.path.isabs(path):
            try:
                path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
            except OSError:
                pass
        real = os.path.realpath(path)
        if any(os.path.commonpath([real, c]) == c for c in closed):
            return real
        if real.startswith("/dev/") or os.path.commonpath([real, temporary]) == temporary:
            return None
        return real

    def hook(event: str, args: tuple) -> None:
        if busy[0]:
            return
        if event in INTROSPECTION:
            busy[0] = True
            try:
                found = learners_frame(1)
            finally:
                busy[0] = False
            if found:
                name = args[1] if event == "object.__getattr__" else event
                _part["problems"].append(Problem("run_time", str(name), *found))
                raise PermissionError(f"{name}: not while the grader runs")
            return
        if event == "open":
            paths = [(args[0], None)] if args[2] & _WRITES else []
        elif event in PATH_EVENTS:
            paths = [(args[i], args[j] if j is not None else None) for i, j in PATH_EVENTS[event]]
        else:
            return
        for path, dir_fd in paths:
            busy[0] = True
            try:
                where = outside(path, dir_fd)
                found = learners_frame(None) if where else None
            finally:
                busy[0] = False
            if where:
                if found:
                    _part["problems"].append(Problem("write", where, *found))
                raise PermissionError(f"{where}: the grader allows writing only in {temporary}")

    return hook
