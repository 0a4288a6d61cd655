"""Confine a graded part's process, and every process it starts, where the system allows it.

Theory of operation
-------------------
The audit hook (:mod:`mcpkit.grading.guard`) sees what the part's own Python does, but a
process the learner's code starts (labs 05, 06 and 09 start servers) is out of its sight: it
may write wherever the grader's user may, and it may leave the part's process group and
outlive the part. The parent's hash of mcpkit and the labs (``grade._digest``) notices a
changed grader, but cannot undo the change.

Where the grader runs as root (a container, CI, a course server) and util-linux's
``unshare`` and ``setpriv`` are there, :func:`wrap` puts the part into namespaces of its own:

* a **mount namespace** in which what holds mcpkit (a checkout or site-packages), Python
  and the course's labs are bound read-only: no process of the part can write them, while
  the temporary folder stays writable;
* a **PID namespace** whose first process is the part's: when it ends (or the parent kills
  it at its time limit), the kernel kills every process left in it, the ones that left the
  part's process group included;
* **no capabilities** and no new privileges from then on: the part is root without root's
  powers, so it can neither undo the read-only mounts nor override a file's permissions.

Elsewhere (not root, no util-linux, a container that refuses namespaces) the part runs as
before, guarded by the audit hook and the hash. A probe decides once per set of folders, by
running the very wrapper on ``true``. ``MCPKIT_CONFINE=0`` turns confinement off.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable

#: Mounts each folder named before ``--`` read-only over itself, then runs the command after
#: it with every capability gone (the bounding set too, so that exec does not give root's
#: back).
_SCRIPT = ('while [ "$1" != -- ]; do "$0" --bind -o ro "$1" "$1" || exit 97; shift; done; '
           'shift; exec "$@"')

_lock = threading.Lock()
_probed: dict[tuple[str, ...], bool] = {}


def folders(paths: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    """The folders to close: real paths that exist, none inside another, none holding the
    temporary folder (a part must be able to write there)."""
    temporary = os.path.realpath(tempfile.gettempdir())
    found = sorted({os.path.realpath(p) for p in paths if os.path.isdir(p)})
    kept: list[str] = []
    for path in found:
        if _within(temporary, path) or any(_within(path, outer) for outer in kept):
            continue
        kept.append(path)
    return tuple(kept)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _tools() -> tuple[str, str, str] | None:
    if os.environ.get("MCPKIT_CONFINE", "1") == "0" or not hasattr(os, "geteuid"):
        return None
    if os.geteuid() != 0:
        return None
    found = tuple(shutil.which(name) for name in ("unshare", "setpriv", "mount"))
    return found if all(found) else None  # type: ignore[return-value]


def wrap(argv: list[str], closed: tuple[str, ...]) -> list[str]:
    """``argv`` run confined with ``closed`` read-only, or ``argv`` itself where this system
    cannot confine it (decided once per ``closed``, by a probe)."""
    tools = _tools()
    if tools is None or not closed:
        return argv
    unshare, setpriv, mount = tools
    wrapped = [unshare, "--mount", "--propagation", "private", "--pid", "--fork",
               "--kill-child", "--mount-proc", "--", "/bin/sh", "-c", _SCRIPT, mount,
               *closed, "--", setpriv, "--no-new-privs", "--bounding-set=-all",
               "--inh-caps=-all", "--ambient-caps=-all", "--", *argv]
    with _lock:
        if closed not in _probed:
            _probed[closed] = _works(wrapped[: -len(argv)] + ["/bin/sh", "-c", "exit 0"])
        usable = _probed[closed]
    return wrapped if usable else argv


def _works(probe: list[str]) -> bool:
    try:
        return subprocess.run(probe, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def closes(paths: Iterable[str | os.PathLike[str]]) -> bool:
    """Whether parts run here get ``paths`` read-only (probing if need be)."""
    closed = folders(paths)
    return wrap([sys.executable], closed) != [sys.executable]
