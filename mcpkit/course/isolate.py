"""Run one graded part of one submission in a process of its own: the class grader's sandbox.

``mcpkit-course grade`` starts ``python -I -m mcpkit.course.isolate`` once per graded cell of
every submission and writes a job to its standard input: the lab's pristine setup cells, the
learner's exercise cells (found by the ids the *pristine* lab gives its exercise cells), the
pristine graded cell, the language, and the seed and scale of the hidden run. The process
answers with one line on its standard output, ``<token> {json}``, and nothing else reaches it.

Theory of operation
-------------------
Nothing the learner did outside the exercise cells exists here: no other cell runs, no saved
output is read, no kernel (so no IPython hooks) is involved, and the graded cell is the
course's own. What is left is the exercise code itself, and that is checked twice:

* before it runs, statically (:func:`scan`): it may import only plain standard modules and
  mcpkit's layers, may not name the grader, the interpreter's internals (``sys.modules`` and
  the hooks, ``builtins``, frames, dunder attributes such as ``__globals__``) or the
  reference this lab asks the learner to write, and may not assign to attributes of anything
  it imported;
* after it ran, and again after the checks ran (:func:`changes`): every mcpkit module, every
  class defined in one and a few standard modules must be exactly as they were imported.

Code that fails either check is *flagged*: it scores zero, and the report says why. The parent
enforces the wall-clock limit by killing this process, so neither an endless loop nor a bare
``except:`` can hold grading up; the memory limit is set here with ``resource.setrlimit``.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import sys
from copy import copy
from typing import Any

#: Standard modules an exercise may import: plain data and algorithms, no I/O, no internals.
ALLOWED_MODULES = frozenset("""
abc bisect collections contextlib copy dataclasses datetime decimal enum fractions functools
heapq itertools json logging math numbers operator queue random re string sys textwrap
threading time typing unicodedata
""".split())
#: What an exercise may use of ``sys`` (printing and reading limits, not the import system).
SYS_ALLOWED = frozenset("""
byteorder float_info getrecursionlimit getsizeof int_info maxsize maxunicode stderr stdout
version version_info
""".split())
#: mcpkit packages an exercise may not import (everything else in mcpkit is the course's).
FORBIDDEN_MCPKIT = ("mcpkit.grading", "mcpkit.course")
#: Names an exercise may not use: ways around the static check or into the interpreter.
FORBIDDEN_NAMES = frozenset("""
eval exec compile __import__ globals locals vars open breakpoint input setattr delattr
get_ipython os builtins __builtins__ gc inspect ctypes importlib grading
""".split())
#: Attributes of allowed modules that reach into the machinery the checks rely on.
FORBIDDEN_PATHS = frozenset("""
logging.disable logging.root logging.Logger.manager logging.setLoggerClass
logging.setLogRecordFactory threading.settrace threading.setprofile
""".split())
#: Dunder attributes that are ordinary Python; every other one is refused.
ALLOWED_DUNDERS = frozenset("__init__ __name__ __qualname__ __class__ __doc__".split())
MEMORY_LIMIT = 1024 * 1024 * 1024  # bytes of address space
_WATCHED_STDLIB = ("json", "json.decoder", "json.encoder", "builtins", "itertools", "functools",
                   "re", "logging")
#: Module state that legitimately changes while checks run.
_CONFIG_KEYS = {"mcpkit.grading.core": {"_language", "_seed", "_scale", "_hidden", "verdicts",
                                        "_collector"}}


def scan(code: str, setup_names: dict[str, str], off_limits: dict[str, set[str]],
         where: str = "cell") -> list[str]:
    """What is wrong with ``code`` (one exercise cell), as sentences; empty when nothing is.

    ``setup_names`` maps names the setup cells bound by import to what they stand for
    (``"framing" -> "mcpkit.framing"``); ``off_limits`` maps a module to the names in it this
    lab asks the learner to write.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []  # it will fail to run, which costs the learner already
    bound = dict(setup_names)  # name -> dotted path, for names that stand for imports
    problems: list[str] = []

    def flag(node: ast.AST, text: str) -> None:
        problems.append(f"{where} line {getattr(node, 'lineno', '?')}: {text}")

    def dotted(node: ast.AST) -> str | None:
        """``a.b.c`` with ``a`` an imported name -> the full path it stands for."""
        if isinstance(node, ast.Name):
            return bound.get(node.id)
        if isinstance(node, ast.Attribute):
            base = dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def check_path(node: ast.AST, path: str) -> None:
        if any(path == m or path.startswith(m + ".") for m in FORBIDDEN_MCPKIT):
            flag(node, f"uses {path} (the grader)")
            return
        if path.startswith("sys.") and path.split(".")[1] not in SYS_ALLOWED:
            flag(node, f"uses {path}")
            return
        if path in FORBIDDEN_PATHS:
            flag(node, f"uses {path}")
            return
        module, _dot, name = path.rpartition(".")
        if name in off_limits.get(module, ()) or path in off_limits:
            flag(node, f"uses {path}, the reference this lab asks you to write")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root != "mcpkit" and root not in ALLOWED_MODULES:
                    flag(node, f"imports {alias.name}")
                check_path(node, alias.name)
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    bound[root] = root
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            root = module.split(".")[0]
            if node.level or (root != "mcpkit" and root not in ALLOWED_MODULES):
                flag(node, f"imports from {module}")
            for alias in node.names:
                check_path(node, f"{module}.{alias.name}")
                bound[alias.asname or alias.name] = f"{module}.{alias.name}"
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            flag(node, f"uses {node.id}")
        elif isinstance(node, ast.Attribute):
            attr = node.attr
            if attr.startswith("__") and attr.endswith("__") and attr not in ALLOWED_DUNDERS:
                flag(node, f"uses the attribute {attr}")
            path = dotted(node)
            if path:
                check_path(node, path)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "getattr":
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)) \
                    or name.value.startswith("__"):
                flag(node, "uses getattr with a computed or dunder name")
            elif node.args and (base := dotted(node.args[0])):
                check_path(node, f"{base}.{name.value}")
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                if name in bound:
                    flag(node, f"rebinds {name}, which the setup cell imported")
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute | ast.Subscript):
                    root = part
                    while isinstance(root, ast.Attribute | ast.Subscript):
                        root = root.value
                    if isinstance(root, ast.Name) and root.id in bound:
                        flag(part, f"changes {root.id}, which was imported, not defined here")
    return problems


def import_bindings(code: str) -> dict[str, str]:
    """Names that ``code`` (a setup cell) binds by import, and the paths they stand for."""
    bound: dict[str, str] = {}
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


_CONTAINERS = (dict, list, set, bytearray)


def _contents(namespace: dict[str, Any]) -> dict[str, Any]:
    """Shallow copies of the mutable containers in a namespace: mutating one in place (a
    registry, a table) is a change too, though the object stays the same."""
    return {k: copy(v) for k, v in namespace.items()
            if type(v) in _CONTAINERS and not k.startswith("__")}  # not __warningregistry__


def _snapshot() -> dict[str, tuple[Any, dict[str, Any]]]:
    """Every mcpkit module and class, and a few standard modules, as they are now."""
    snap: dict[str, tuple[Any, dict[str, Any]]] = {}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "mcpkit" or name.startswith("mcpkit.")
                                  or name in _WATCHED_STDLIB):
            continue
        snap[name] = (module, dict(vars(module)))
        if name.startswith("mcpkit"):
            snap[f"{name} (contents)"] = (module, _contents(vars(module)))
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == name:
                snap[f"{name}.{value.__qualname__}"] = (value, dict(vars(value)))
                snap[f"{name}.{value.__qualname__} (contents)"] = (value,
                                                                  _contents(vars(value)))
    return snap


def changes(snap: dict[str, tuple[Any, dict[str, Any]]]) -> list[str]:
    """What differs from ``snap``: replaced or removed attributes, replaced modules."""
    found = []
    for key, (obj, before) in snap.items():
        now = vars(obj)
        if key.endswith(" (contents)"):
            owner = key.removesuffix(" (contents)")
            skip = _CONFIG_KEYS.get(owner, set())
            found += [f"{owner}.{attr} was changed in place" for attr, value in before.items()
                      if attr not in skip and attr in now and now[attr] != value]
            continue
        if isinstance(obj, type(sys)) and sys.modules.get(key) is not obj:
            found.append(f"sys.modules[{key!r}] was replaced")
        skip = _CONFIG_KEYS.get(key, set())
        for attr, value in before.items():
            if attr in skip:
                continue
            if attr not in now or now[attr] is not value:
                found.append(f"{key}.{attr} was changed")
        if isinstance(obj, type):
            found += [f"{key}.{attr} was added" for attr in now if attr not in before]
    return found


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Define the exercises, run the graded cell, and say how it went."""
    from mcpkit import grading
    from mcpkit.grading import core

    # Everything a check may use is imported now, before any learner code runs.
    for module in ("framing", "jsonrpc", "dispatch", "server"):
        __import__(f"mcpkit.{module}")
    checks_failed = core.ChecksFailed
    snap = _snapshot()
    problems: list[str] = []
    for cell_id, code in job["exercises"]:
        problems += scan(code, job["setup_names"], job["off_limits"], where=cell_id)

    namespace: dict[str, Any] = {"__name__": "__main__"}
    cell_errors: list[str] = []
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        for cell_id, code in job["setup"]:
            exec(compile(code, cell_id, "exec"), namespace)
        if not problems:
            for cell_id, code in job["exercises"]:
                try:
                    exec(compile(code, cell_id, "exec"), namespace)
                except BaseException as exc:  # noqa: BLE001 - the learner's, reported below
                    cell_errors.append(f"{cell_id}: {type(exc).__name__}: {exc}"[:300])
    problems += changes(snap)
    if problems:
        return {"status": "flagged", "passed": 0, "total": None, "problems": problems,
                "report": ""}

    grading.set_language(job["lang"])
    core.configure(job["seed"], job["scale"])
    namespace["grading"] = grading  # the real one, whatever the cells did with the name
    printed = io.StringIO()
    verdicts = core.verdicts  # bound now: the list object itself is what counts
    verdicts.clear()
    passed: int | None
    total: int | None
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(job["graded"], "graded", "exec"), namespace)
    except checks_failed as exc:
        status, report = "failed", exc.report
    except BaseException as exc:  # noqa: BLE001 - a crash of this part only
        status, report = "crashed", f"{type(exc).__name__}: {exc}"[:2000]
    else:
        status, report = "passed", printed.getvalue()
    if cell_errors:  # what the learner would have seen when running those cells
        report = "\n".join([*cell_errors, report])
    if status == "crashed" or not verdicts:
        passed, total, status = 0, None, "crashed"
    else:
        passed, total = verdicts[-1]
        if status == "passed" and passed != total:
            status = "failed"
    problems = changes(snap)
    if problems:
        return {"status": "flagged", "passed": 0, "total": total, "problems": problems,
                "report": ""}
    return {"status": status, "passed": passed, "total": total, "report": report,
            "problems": [], "cell_errors": cell_errors}


def main() -> None:
    job = json.loads(sys.stdin.read())
    # The answer goes to a private copy of stdout; fds 1 and 2 lead nowhere from here on.
    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass  # not on this platform: the parent's time limit still holds
    try:
        result = run_job(job)
    except MemoryError:
        result = {"status": "crashed", "passed": 0, "total": None, "problems": [],
                  "report": "MemoryError"}
    answer.write(job["token"] + " " + json.dumps(result) + "\n")
    answer.flush()
    os._exit(0)  # no atexit handlers or threads of the learner's get to run after this


if __name__ == "__main__":
    main()
