"""What exercise code may and may not do, and how a breach is told to the learner.

The class grader (:mod:`mcpkit.course.isolate`) runs each graded part's exercise code in a
process of its own and *flags* code that reaches for the grader, the interpreter's internals
or the reference the lab asks the learner to write. The notebook's graded cells read the
same rules (:func:`notebook_warnings`), so a learner is warned where they work, in their
language, about exactly what the class grader would flag.

Theory of operation
-------------------
Two checks, one static and one at run time.

* :func:`scan` reads an exercise cell before it runs: it may import only plain standard
  modules and mcpkit's layers, may not name the grader, the interpreter's internals
  (``sys.modules`` and the hooks, ``builtins``, frames, dunder attributes such as
  ``__globals__``) or the reference this lab asks for, and may not assign to attributes of
  anything it imported. A module of mcpkit is no reference (the rest of what it holds is the
  learner's); what is read from it is checked, so it may be used only to read from
  (``jsonrpc.error_response``), not as a value that would carry the reference out of sight.
* :func:`snapshot` / :func:`changes` compare mcpkit (every module and class, their tables
  included) and a few standard modules with how they were when imported. Only what a learner's
  code could change to bend a check counts: the standard library's own private state (the
  cache of an enum's values, the regex cache) changes whenever ordinary code runs, so it is
  not evidence, and neither are the public names a standard module rebinds to itself.

A breach is a :class:`Problem`: where (the cell and line) and what, rendered by
:func:`describe` in the learner's language with the reason the rule exists.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import sys
from collections.abc import Callable, Iterable, Iterator
from copy import copy
from dataclasses import asdict, dataclass
from typing import Any

from . import core
from .core import _

#: Standard modules an exercise may import: plain data and algorithms, no I/O, no internals.
ALLOWED_MODULES = frozenset("""
abc base64 binascii bisect codecs collections contextlib copy dataclasses datetime decimal
enum fractions functools heapq io itertools json logging math numbers operator queue random re
string sys textwrap threading time traceback typing unicodedata
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
traceback.walk_stack traceback.walk_tb traceback.StackSummary traceback.TracebackException
traceback.FrameSummary logging.currentframe operator.attrgetter operator.methodcaller
string.Formatter codecs.register codecs.register_error codecs.unregister codecs.open
io.open io.open_code io.FileIO
""".split())
#: Attributes of frames, generators, coroutines, tracebacks and code: from a frame, every
#: caller's variables (the checks' included) are in reach, so none of these may be read.
FRAME_ATTRIBUTES = frozenset("""
f_back f_builtins f_code f_globals f_lasti f_lineno f_locals f_trace gi_code gi_frame
gi_yieldfrom cr_await cr_code cr_frame cr_origin ag_await ag_code ag_frame tb_frame
tb_lasti tb_lineno tb_next
""".split())
#: Dunder attributes that are ordinary Python; every other one is refused.
ALLOWED_DUNDERS = frozenset("__init__ __name__ __qualname__ __module__ __class__ __doc__"
                            .split())
#: Standard modules whose public functions the checks call (replacing one could bend them).
WATCHED_STDLIB = ("json", "json.decoder", "json.encoder", "builtins", "itertools",
                  "functools", "re", "logging")
#: Module state of mcpkit that legitimately changes while checks run.
CONFIG_KEYS = {"mcpkit.grading.core": {"_language", "_seed", "_scale", "_hidden", "_detailed",
                                       "verdicts", "_collector", "_warnings",
                                       "names_seen"},
               "mcpkit.grading.sandbox": {"handed_in"},
               "mcpkit.grading.guard": {"_part"},  # the part the run-time guard judges
               "mcpkit.deprecations": {"_warned"}}  # which warnings were given


@dataclass(frozen=True)
class Problem:
    """One breach: ``kind`` (see :data:`_REASONS`), the name involved, and where it was seen
    (a cell id and a line; ``cell`` is empty for a change seen while the checks ran)."""

    kind: str
    name: str
    cell: str = ""
    line: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _reasons() -> dict[str, str]:
    """kind -> the sentence that says what was done and why it is flagged ({name})."""
    return {
        "import": _("imports {name}: exercise code may import mcpkit's layers and only these "
                    "standard modules: {allowed}",
                    "importa {name}: el código de un ejercicio puede importar las capas de "
                    "mcpkit y, de la biblioteca estándar, solo estos módulos: {allowed}"),
        "grader": _("uses {name}, the course's grader: exercise code may not reach for it",
                    "usa {name}, el calificador del curso: el código de un ejercicio no puede "
                    "recurrir a él"),
        "internals": _("uses {name}, part of the interpreter's internals, which the checks "
                       "rely on",
                       "usa {name}, parte de las interioridades del intérprete, de las que "
                       "dependen las comprobaciones"),
        "reference": _("uses {name}, the reference this lab asks you to write yourself",
                       "usa {name}, la referencia que este laboratorio te pide que escribas tú"),
        "handed": _("hands the checks {name}, the reference this lab asks you to write "
                    "yourself",
                    "pasa a las comprobaciones {name}, la referencia que este laboratorio te "
                    "pide que escribas tú"),
        "name": _("uses {name}, a way around the checks: exercise code may not use it",
                  "usa {name}, una forma de eludir las comprobaciones: el código de un "
                  "ejercicio no puede usarlo"),
        "dunder": _("uses the attribute {name}, a door into the interpreter's internals",
                    "usa el atributo {name}, una puerta a las interioridades del intérprete"),
        "getattr": _("uses getattr with a computed or dunder name ({name})",
                     "usa getattr con un nombre calculado o dunder ({name})"),
        "getattr_value": _("uses getattr as a value, which the checks cannot follow: call "
                           "getattr(thing, \"name\") with the name written out",
                           "usa getattr como un valor, que las comprobaciones no pueden "
                           "seguir: llama a getattr(objeto, \"nombre\") con el nombre escrito "
                           "tal cual"),
        "run_time": _("reached {name} while it ran, a door into the interpreter's internals "
                      "(refused)",
                      "accedió a {name} durante la ejecución, una puerta a las interioridades "
                      "del intérprete (acceso denegado)"),
        "write": _("wrote to {name}: while it is graded, exercise code may write files only "
                   "in the temporary folder (refused)",
                   "escribió en {name}: mientras se califica, el código de un ejercicio solo "
                   "puede escribir archivos en la carpeta temporal (escritura denegada)"),
        "module_value": _("uses the module {name} as a value, which the checks cannot follow: "
                          "name what you use from it ({name}.something)",
                          "usa el módulo {name} como un valor, que las comprobaciones no "
                          "pueden seguir: nombra lo que usas de él ({name}.algo)"),
        "rebind": _("rebinds {name}, which the setup cell imported",
                    "vuelve a asignar {name}, que importó la celda de preparación"),
        "assign": _("changes {name}, which was imported, not defined in your cell",
                    "modifica {name}, que fue importado, no definido en tu celda"),
        "replaced": _("{name} was replaced or removed",
                      "{name} fue sustituido o eliminado"),
        "added": _("{name} was added to a class your code did not define",
                   "se añadió {name} a una clase que tu código no definió"),
        "in_place": _("{name} was changed in place",
                      "{name} se modificó en su sitio"),
        "module": _("sys.modules[{name!r}] was replaced",
                    "se sustituyó sys.modules[{name!r}]"),
    }


def describe(problem: Problem | dict[str, Any], where: dict[str, str] | None = None) -> str:
    """One problem as a sentence in the current language: where, what, and why.

    ``where`` maps cell ids to how the learner knows the cell ("exercise 2"); a cell it does
    not know is named by its id.
    """
    p = problem if isinstance(problem, Problem) else Problem(**problem)
    reason = _reasons()[p.kind].format(name=p.name, allowed=", ".join(sorted(ALLOWED_MODULES)))
    if not p.cell:
        return _("while the checks ran: ", "mientras se ejecutaban las comprobaciones: ") + reason
    cell = (where or {}).get(p.cell, p.cell)
    if p.line:
        return _("{cell}, line {line}: ", "{cell}, línea {line}: ").format(
            cell=cell, line=p.line) + reason
    return f"{cell}: {reason}"


_NOTHING = object()


def _named(path: str) -> Any:
    """The object a dotted mcpkit path names, or ``_NOTHING``: its longest importable module,
    then attributes read statically (no property or module ``__getattr__`` runs)."""
    parts = path.split(".")
    if parts[0] != "mcpkit" or any(not p.isidentifier() or p.startswith("__") for p in parts):
        return _NOTHING  # (never import mcpkit.__main__: it is the command line)
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        found: Any = sys.modules.get(name)
        if found is None:
            try:
                found = importlib.import_module(name)
            except Exception:  # noqa: BLE001 - not a module (or not importable here)
                continue
        for attr in parts[i:]:
            found = inspect.getattr_static(found, attr, _NOTHING)
            if found is _NOTHING:
                break
        if isinstance(found, staticmethod | classmethod):
            found = found.__func__  # as the attribute is read: the function itself
        return found
    return _NOTHING


def _worth_matching(value: Any) -> bool:
    """Objects identity tells apart: not the interned constants any module may share."""
    return callable(value) or isinstance(value, type(sys)) or (
        isinstance(value, dict | list | set | frozenset | tuple) and bool(value))


def off_limits_objects(off_limits: dict[str, Any]) -> dict[int, str]:
    """id() of every object ``off_limits`` names (each name in each module) -> its path: the
    same function or class reached through a module that imports it
    (``mcpkit.session.encoder_for`` is ``mcpkit.framing.encoder_for``) is the same reference.
    The modules themselves are not: the rest of what they hold is the learner's to use."""
    objects: dict[int, str] = {}
    for module, names in off_limits.items():
        for path in (f"{module}.{name}" for name in names):
            value = _named(path)
            if value is not _NOTHING and _worth_matching(value):
                objects.setdefault(id(value), path)
    return objects


def _reference_of(path: str, references: dict[int, str]) -> str | None:
    """The off-limits path ``path`` names: the same object, a member of a reference class
    (``mcpkit.host.Host.anthropic_tools``), or an object made by one, or a member of it (an
    example server's dispatcher: ``mcpkit.dispatch.Dispatcher(...).call``)."""
    same = references.get(id(_named(path)))
    parts = path.split(".")
    for end in range(len(parts) - 1, 1, -1):
        if same is not None:
            return same
        owner = _named(".".join(parts[:end]))
        if isinstance(owner, type) and id(owner) in references:
            same = references[id(owner)] + "." + ".".join(parts[end:])
    for end in range(len(parts), 1, -1):
        if same is not None:
            return same
        maker = next((references[id(k)] for k in type(_named(".".join(parts[:end]))).__mro__
                      if id(k) in references), None)
        if maker is not None:
            same = ".".join([f"{maker}(...)", *parts[end:]])
    return same


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _reads_of_locals(tree: ast.AST) -> set[int]:
    """id() of every name read inside a function or comprehension that binds that name
    itself (a parameter, an assignment, a loop variable): Python makes it local there, so it
    is never the builtin of that name (``def parse(input): ...``). A module-level assignment,
    a class body or a ``global`` does not count: there the builtin can still be reached."""
    binds: dict[int, set[str]] = {}  # id(scope) -> names it binds
    declared: dict[int, set[str]] = {}  # id(scope) -> names it declares global
    reads: list[tuple[ast.Name, tuple[ast.AST, ...]]] = []

    def visit(node: ast.AST, scopes: tuple[ast.AST, ...]) -> None:
        here = scopes[-1] if scopes else None
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                reads.append((node, scopes))
            elif here is not None:
                binds.setdefault(id(here), set()).add(node.id)
        elif isinstance(node, ast.arg) and here is not None:
            binds.setdefault(id(here), set()).add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name and here is not None:
            binds.setdefault(id(here), set()).add(node.name)
        elif isinstance(node, ast.Global) and here is not None:
            declared.setdefault(id(here), set()).update(node.names)
        if isinstance(node, _FUNCTIONS):
            args = node.args
            outside = [*args.defaults, *(d for d in args.kw_defaults if d is not None),
                       *getattr(node, "decorator_list", []), *_annotations(node),
                       *(a.annotation for a in [*args.posonlyargs, *args.args,
                                                *args.kwonlyargs, args.vararg, args.kwarg]
                         if a is not None and a.annotation is not None)]
            for child in outside:  # evaluated where the function is defined
                visit(child, scopes)
            skip = {id(c) for c in outside}
            for child in ast.walk(args):
                if isinstance(child, ast.arg):
                    visit(child, (*scopes, node))
            body = node.body if isinstance(node.body, list) else [node.body]
            for child in body:
                if id(child) not in skip:
                    visit(child, (*scopes, node))
            return
        if isinstance(node, _COMPREHENSIONS):
            first, *rest = node.generators
            visit(first.iter, scopes)  # evaluated in the enclosing scope
            inner = (*scopes, node)
            for child in [first.target, *first.ifs, *rest,
                          *([node.key, node.value] if isinstance(node, ast.DictComp)
                            else [node.elt])]:
                visit(child, inner)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, scopes)

    visit(tree, ())
    local = set()
    for name, scopes in reads:
        for scope in reversed(scopes):
            if name.id in declared.get(id(scope), ()):
                break
            if name.id in binds.get(id(scope), ()):
                local.add(id(name))
                break
    return local


def _annotations(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.arg | ast.AnnAssign):
        return [node.annotation] if node.annotation is not None else []
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
        return [node.returns]
    return []


def scan(code: str, setup_names: dict[str, str], off_limits: dict[str, Any],
         cell: str = "cell") -> list[Problem]:
    """What is wrong with ``code`` (one exercise cell); empty when nothing is.

    ``setup_names`` maps names the setup cells bound by import to what they stand for
    (``"framing" -> "mcpkit.framing"``); ``off_limits`` maps a module to the names in it this
    lab asks the learner to write. A path is compared by what it names, not only by how it
    is spelt, so a reference reached through another module's import of it is flagged too.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []  # it will fail to run, which costs the learner already
    bound = dict(setup_names)  # name -> dotted path, for names that stand for imports
    # What the setup imports, an exercise may import again (`import subprocess` in lab 09):
    # its names are in the namespace already, so that adds nothing it could not reach.
    # (`from urllib.parse import quote` lets in urllib.parse, not urllib.)
    from_setup = {*setup_names.values(),
                  *(path.rsplit(".", 1)[0] for path in setup_names.values() if "." in path)}

    def importable(module: str) -> bool:  # (__future__: directives to the compiler)
        return module.split(".")[0] in ALLOWED_MODULES or module == "__future__" or any(
            module == m or module.startswith(m + ".") for m in from_setup)
    problems: list[Problem] = []
    references = off_limits_objects(off_limits)

    def flag(node: ast.AST, kind: str, name: str) -> None:
        problems.append(Problem(kind, name, cell, getattr(node, "lineno", 0)))

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
            flag(node, "grader", path)
        elif path.startswith("sys.") and path.split(".")[1] not in SYS_ALLOWED:
            flag(node, "internals", path)
        elif path in FORBIDDEN_PATHS:
            flag(node, "internals", path)
        else:
            module, _dot, name = path.rpartition(".")
            if name in off_limits.get(module, ()):
                flag(node, "reference", path)
            elif path.startswith("mcpkit.") and (same := _reference_of(path, references)):
                flag(node, "reference", f"{path} (= {same})")

    def check_star(node: ast.AST, module: str) -> None:
        """``from module import *``: the names it binds are not in the code to check."""
        found = _named(module)
        if not isinstance(found, type(sys)):
            return
        space = vars(found)
        names = space.get("__all__") or [n for n in space if not n.startswith("_")]
        for name in names:
            check_path(node, f"{module}.{name}")

    def aliases(node: ast.AST) -> list[tuple[str, ast.AST]]:
        """(name, expression) pairs ``node`` binds by plain assignment: ``m = mcpkit``,
        ``a, b = x, y``, ``(m := mcpkit)``, and a parameter's default (``def f(m=mcpkit)``)."""
        pairs: list[tuple[ast.AST, ast.AST]] = []
        if isinstance(node, ast.Assign):
            pairs = [(target, node.value) for target in node.targets]
        elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
            pairs = [(node.target, node.value)]
        elif isinstance(node, ast.arguments):
            positional = [*node.posonlyargs, *node.args]
            pairs = [*zip(positional[len(positional) - len(node.defaults):], node.defaults,
                          strict=True),
                     *((arg, default) for arg, default in zip(node.kwonlyargs,
                                                              node.kw_defaults, strict=True)
                       if default is not None)]
        found: list[tuple[str, ast.AST]] = []
        for target, value in pairs:  # (a, b) = (x, y) adds its pairs to the loop's list
            sequences = ast.Tuple | ast.List
            if isinstance(target, sequences) and isinstance(value, sequences) \
                    and len(target.elts) == len(value.elts):
                pairs += list(zip(target.elts, value.elts, strict=True))
            elif isinstance(target, ast.Name | ast.arg):
                found.append((target.id if isinstance(target, ast.Name) else target.arg, value))
        return found

    # Names in annotations only describe: `host: Host` uses nothing.
    annotations = {id(n) for node in ast.walk(tree) for a in _annotations(node)
                   for n in ast.walk(a)}
    own_locals = _reads_of_locals(tree)  # `input` as a parameter is not the builtin
    # A module of mcpkit may be used only as the base of a name read from it (`jsonrpc.x`,
    # which check_path sees), or renamed (followed by aliases()): as any other value
    # (`[jsonrpc][0].classify`, passed to a function) what is read from it is out of sight.
    as_base = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}

    def module_as_value(node: ast.AST) -> None:
        if not off_limits or id(node) in as_base or id(node) in annotations \
                or not isinstance(getattr(node, "ctx", None), ast.Load):
            return
        path = dotted(node)
        if path and path.startswith("mcpkit") and isinstance(_named(path), type(sys)):
            flag(node, "module_value", path)

    for node in ast.walk(tree):  # parents before children: an alias is known before its use
        for name, value in aliases(node):  # a name that stands for an import, renamed
            path = dotted(value)
            if path:
                bound[name] = path
                check_path(node, path)
                as_base.add(id(value))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "getattr" and node.args:
            as_base.add(id(node.args[0]))  # getattr(module, "name"): checked below
        if isinstance(node, ast.Name | ast.Attribute):
            module_as_value(node)
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root != "mcpkit" and not importable(alias.name):
                    flag(node, "import", alias.name)
                if alias.name not in from_setup:
                    check_path(node, alias.name)
                bound[alias.asname or root] = alias.name if alias.asname else root
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            root = module.split(".")[0]
            if node.level or (root != "mcpkit" and not importable(module)):
                flag(node, "import", module)
            for alias in node.names:
                if alias.name == "*":
                    check_star(node, module)
                    continue
                if f"{module}.{alias.name}" not in from_setup:  # the setup's names: see uses
                    check_path(node, f"{module}.{alias.name}")
                bound[alias.asname or alias.name] = f"{module}.{alias.name}"
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES \
                and isinstance(node.ctx, ast.Load) and id(node) not in own_locals:
            flag(node, "name", node.id)
        elif isinstance(node, ast.Name) and node.id == "getattr" and id(node) not in called \
                and isinstance(node.ctx, ast.Load) and id(node) not in own_locals:
            flag(node, "getattr_value", node.id)  # g = getattr; g(x, "__glo" + "bals__")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                and node.id in bound and id(node) not in annotations:
            path = bound[node.id]  # a reference the setup imported, used by its name
            if path.startswith("mcpkit.") and id(_named(path)) in references:
                flag(node, "reference", path)
        elif isinstance(node, ast.Attribute):
            attr = node.attr
            if attr.startswith("__") and attr.endswith("__") and attr not in ALLOWED_DUNDERS:
                flag(node, "dunder", attr)
            elif attr in FRAME_ATTRIBUTES:
                flag(node, "internals", attr)
            path = dotted(node)
            if path:
                check_path(node, path)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "getattr":
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)) \
                    or name.value.startswith("__") or name.value in FRAME_ATTRIBUTES:
                flag(node, "getattr", ast.unparse(name) if name is not None else "?")
            elif node.args and (base := dotted(node.args[0])):
                check_path(node, f"{base}.{name.value}")
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                if name in bound:
                    flag(node, "rebind", name)
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            for part in _assigned_through(target):
                root = part
                while isinstance(root, ast.Attribute | ast.Subscript):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in bound:
                    flag(part, "assign", root.id)
    return problems


def _assigned_through(target: ast.AST) -> Iterator[ast.AST]:
    """The attribute and subscript targets an assignment changes (each element of a tuple or
    list target), not the names its indices only read: ``table[json.dumps(key)] = v`` changes
    ``table``, not ``json``."""
    if isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _assigned_through(element)
    elif isinstance(target, ast.Starred):
        yield from _assigned_through(target.value)
    elif isinstance(target, ast.Attribute | ast.Subscript):
        yield target


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


# --------------------------------------------------------------------------- run time

_CONTAINERS = (dict, list, set, bytearray)
Snapshot = dict[str, tuple[Any, dict[str, Any]]]


def _contents(namespace: dict[str, Any]) -> dict[str, Any]:
    """Shallow copies of the mutable containers in a namespace: mutating one in place (a
    registry, a table) is a change too, though the object stays the same."""
    return {k: copy(v) for k, v in namespace.items()
            if type(v) in _CONTAINERS and not k.startswith("__")}  # not __warningregistry__


def _watched(attr: str) -> bool:
    """Public and dunder names; a standard module's private state is its own business."""
    return not attr.startswith("_") or (attr.startswith("__") and attr.endswith("__"))


def _public(namespace: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in namespace.items() if _watched(k)}


def snapshot() -> Snapshot:
    """Every mcpkit module and class (attributes and tables), and the public attributes of
    a few standard modules and their classes, as they are now."""
    snap: Snapshot = {}
    for name, module in list(sys.modules.items()):
        ours = name == "mcpkit" or name.startswith("mcpkit.")
        if module is None or not (ours or name in WATCHED_STDLIB):
            continue
        space = vars(module)
        snap[name] = (module, dict(space) if ours else _public(space))
        if ours:
            snap[f"{name} (contents)"] = (module, _contents(space))
        for value in list(space.values()):
            if isinstance(value, type) and value.__module__ == name:
                key = f"{name}.{value.__qualname__}"
                members = vars(value)
                snap[key] = (value, dict(members) if ours else _public(members))
                if ours:
                    snap[f"{key} (contents)"] = (value, _contents(members))
    return snap


def changes(snap: Snapshot) -> list[Problem]:
    """What differs from ``snap``: replaced, removed or added attributes, tables changed in
    place, replaced modules. The problems carry no cell: the caller knows when it looked."""
    found: list[Problem] = []
    for key, (obj, before) in snap.items():
        now = vars(obj)
        if key.endswith(" (contents)"):
            owner = key.removesuffix(" (contents)")
            skip = CONFIG_KEYS.get(owner, set())
            found += [Problem("in_place", f"{owner}.{attr}") for attr, value in before.items()
                      if attr not in skip and attr in now and now[attr] != value]
            continue
        if isinstance(obj, type(sys)) and sys.modules.get(key) is not obj:
            found.append(Problem("module", key))
        skip = CONFIG_KEYS.get(key, set())
        for attr, value in before.items():
            if attr not in skip and (attr not in now or now[attr] is not value):
                found.append(Problem("replaced", f"{key}.{attr}"))
        if isinstance(obj, type):
            ours = key.startswith("mcpkit")
            found += [Problem("added", f"{key}.{attr}") for attr in now
                      if attr not in before and (ours or _watched(attr))]
    return found


# --------------------------------------------------------------------------- in the notebook


def _binds(code: str) -> set[str]:
    """Names a cell binds at its top level (def, class, assignment, import)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:  # IPython syntax (magics) or a broken cell: not an exercise
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def notebook_warnings(values: Iterable[Any], lab_module: str) -> list[str]:
    """What the class grader would flag in the cells that define ``values`` (what a graded
    cell hands to its checker), as sentences in the current language.

    The cells are found in IPython's input history (``In``): for each value, the last cell
    run that bound a name the value has in the notebook. Outside IPython (a script, the class
    grader's own process) there is no history, and nothing to warn about here.
    """
    main = sys.modules.get("__main__")
    history = getattr(main, "In", None)
    if main is None or not isinstance(history, list):
        return []
    off_limits: dict[str, Any] = getattr(sys.modules.get(lab_module), "OFF_LIMITS", {})
    space = vars(main)
    names: dict[str, str] = {}
    for key, value in space.items():
        if isinstance(value, type(sys)):
            names[key] = value.__name__
        elif str(getattr(value, "__module__", "")).startswith("mcpkit") \
                and hasattr(value, "__qualname__"):
            names[key] = f"{value.__module__}.{value.__qualname__}"
    warnings: list[str] = []
    scanned: set[int] = set()
    for value in values:
        bound_as = {key for key, v in space.items() if v is value and not key.startswith("_")}
        if not bound_as:
            continue
        at = next((i for i in range(len(history) - 1, -1, -1)
                   if isinstance(history[i], str) and _binds(history[i]) & bound_as
                   and "set_language(" not in history[i]), None)  # not the setup cell
        if at is None or at in scanned:
            continue
        scanned.add(at)
        cell = _("the cell that defines {name}", "la celda que define {name}").format(
            name=sorted(bound_as)[0])
        setup = {k: v for k, v in names.items() if k not in _binds(history[at])}
        warnings += [describe(p, {"cell": cell})
                     for p in scan(history[at], setup, off_limits, cell="cell")]
    return warnings


#: What the last checker was handed that is (or is built on) the lab's reference, found by
#: :func:`guarded`; the class grader flags the part for it (static checks cannot see
#: ``type(obj)`` or an attribute of an object made at run time).
handed_in: list[Problem] = []


def _functions(value: Any) -> list[Any]:
    """The functions ``value`` runs when called: itself, or what a method, a static or class
    method, a property or a ``functools.partial`` wraps."""
    if isinstance(value, property):
        return [f for f in (value.fget, value.fset, value.fdel) if f is not None]
    for attr in ("__func__", "func"):  # methods, static and class methods; partial
        inner = getattr(value, attr, None)
        if callable(inner):
            return _functions(inner)
    return [value] if hasattr(value, "__code__") else []


def _reference_code(references: dict[int, str]) -> dict[Any, str]:
    """The code object of every off-limits function, and of every function of an off-limits
    class (mcpkit's classes in its MRO included) -> the path to name it by."""
    codes: dict[Any, str] = {}
    for path in references.values():
        value = _named(path)
        owners = [k for k in value.__mro__ if k.__module__.startswith("mcpkit")] \
            if isinstance(value, type) else []
        for owner in owners:
            for name, member in vars(owner).items():
                for function in _functions(member):
                    codes.setdefault(function.__code__, f"{path}.{name}")
        for function in ([] if owners else _functions(value)):
            codes.setdefault(function.__code__, path)
    return codes


def built_on_reference(value: Any, off_limits: dict[str, Any]) -> str | None:
    """The off-limits path ``value`` is, or is built on, or None: the reference itself, a
    class deriving from it, or any function (a method taken out of a reference class, a
    class whose methods are the reference's, a partial of it) whose code is the reference's."""
    references = off_limits_objects(off_limits)
    return _built_on(value, references, _reference_code(references))


def _built_on(value: Any, references: dict[int, str], codes: dict[Any, str]) -> str | None:
    if id(value) in references:
        return references[id(value)]
    members: list[Any] = [value]
    if isinstance(value, type):
        for klass in value.__mro__[1:]:
            if id(klass) in references:
                return references[id(klass)]
        members += [m for klass in value.__mro__ if klass is not object
                    for m in vars(klass).values()]
    for member in members:
        for function in _functions(member):
            if function.__code__ in codes:
                return codes[function.__code__]
    return None


def _handed(values: list[Any], off_limits: dict[str, Any]) -> list[Problem]:
    """What :func:`guarded` flags among the values a checker is handed."""
    references = off_limits_objects(off_limits)
    codes = _reference_code(references)
    problems = []
    for value in values:
        try:
            path = _built_on(value, references, codes)
        except Exception:  # noqa: BLE001 - an object whose attributes raise: the checks say
            continue
        if path:
            name = getattr(value, "__qualname__", type(value).__name__)
            problems.append(Problem("handed", f"{name} → {path}"))
    return problems


def guarded(check: Callable[..., Any]) -> Callable[..., Any]:
    """``check`` (a lab's checker), first reading what it is handed the way the class grader
    will: a breach is reported by :func:`mcpkit.grading.core.run_checks` and fails the cell."""

    @functools.wraps(check)
    def run(*args: Any, **kwargs: Any) -> Any:
        values = [*args, *kwargs.values()]
        off_limits = getattr(sys.modules.get(check.__module__), "OFF_LIMITS", {})
        handed_in[:] = _handed(values, off_limits)
        try:
            core._warnings[:] = notebook_warnings(values, check.__module__)
        except Exception:  # noqa: BLE001 - a warning we cannot compute is not a failure
            core._warnings.clear()
        core._warnings += [describe(p) for p in handed_in]
        try:
            return check(*args, **kwargs)
        finally:
            core._warnings.clear()

    return run
