"""The machinery every lab's checks share: language, cases, reports, time limits.

A graded cell holds a single call such as ``grading.check_ndjson_decoder(NdjsonDecoder)``.
The checker (in ``labNN.py``, one module per lab) runs the learner's code on many cases and
hands the outcomes to :func:`run_checks`, which either prints one fixed line::

    ✓ 14/14 checks passed

or raises :class:`ChecksFailed` (an ``AssertionError``) whose message is the full report: the
summary line, then every case, and for each failed case what went in, what was expected and
what came back. The success line never varies, so ``pytest --nbval`` can compare it with the
expected output stored in the lab; a failure raises, so a graded cell fails ``pytest --nbval``
even when the learner saved a failing output.

Theory of operation
-------------------
Messages are chosen when they are printed, from :func:`set_language` (the setup cell of every
notebook calls it), so checkers are written once with both languages side by side: ``_(en,
es)`` returns the current one. Each case runs the learner's code with standard output
captured (prints must not change the graded output) and, where the platform allows, under a
time limit, so a decoder stuck in a loop becomes a failed case instead of a frozen notebook.

Hand-written cases say what the lesson teaches; :func:`differential` makes sure nothing else
slips through. It runs the learner's code and mcpkit's own layer side by side on inputs from
a seeded generator (:class:`Gen`), compares the two traces step by step, and shrinks the
first input on which they differ. The notebook's run is fixed (``DEFAULT_SEED``, the base
number of cases); the class grader calls :func:`configure` with a seed and a scale of its
own, and reads each verdict from :data:`verdicts` rather than from printed text.
"""


from __future__ import annotations

import contextlib
import io
import logging
import os
import random
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

LANGUAGES = ("en", "es")
#: CPU seconds a single case may use before it counts as stuck (Unix main thread only). CPU
#: time, not wall time: a loaded machine slows a case down without making it use more CPU.
CASE_TIME_LIMIT = 5.0
#: Wall-clock seconds a case may wait (for a read, a lock, a sleep) before it counts as stuck.
CASE_WAIT_LIMIT = 15.0
#: Failed cases reported in full; the rest are listed by name only.
MAX_DETAILED_FAILURES = 6
_detailed = MAX_DETAILED_FAILURES  # configure(every_detail=True): all of them (grade --all)
_MAX_REPR = 160

_language = "en"


def set_language(lang: str) -> None:
    """Choose the language of every message printed from now on (``"en"`` or ``"es"``)."""
    global _language
    if lang not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {lang!r}")
    _language = lang


def get_language() -> str:
    return _language


def _(en: str, es: str) -> str:
    """The text in the current language."""
    return es if _language == "es" else en


# --------------------------------------------------------------------------- the report


class ChecksFailed(AssertionError):
    """Raised by :func:`run_checks` when a case fails; the message is the whole report.

    IPython prints ``_render_traceback_()`` instead of a traceback, so the learner sees the
    report alone, in plain text, whatever the kernel's colour and traceback settings.
    """

    def __init__(self, report: str, passed: int, total: int) -> None:
        super().__init__(report)
        self.report = report
        self.passed = passed
        self.total = total

    def _render_traceback_(self) -> list[str]:
        return self.report.splitlines()


@dataclass
class CaseResult:
    """The outcome of one case: its name and, when it failed, the lines that explain why."""

    name: str
    ok: bool
    details: list[str] = field(default_factory=list)
    not_implemented: bool = False
    generated: bool = False  # a differential check: the class grader runs it with more cases


def summary_line(passed: int, total: int) -> str:
    mark = "✓" if passed == total else "✗"
    return f"{mark} {passed}/{total} " + _("checks passed", "comprobaciones superadas")


#: (passed, total) of every run_checks() call: the class grader reads its verdict here, not
#: from printed text that any thread of the learner's could also print.
verdicts: list[tuple[int, int]] = []
#: The name of every check run so far, in order (what course/README.md's rule tables cite).
names_seen: list[str] = []
#: What the class grader would flag in the code this graded cell checks (set by
#: :func:`mcpkit.grading.sandbox.guarded` before each checker runs, in the notebook only).
_warnings: list[str] = []


def run_checks(results: Iterable[CaseResult]) -> None:
    """Print one fixed line if every case passed; otherwise raise :class:`ChecksFailed`.

    A cell whose code the class grader would flag fails too, its reasons first."""
    results = list(results)
    total = len(results)
    passed = sum(r.ok for r in results)
    verdicts.append((passed, total))
    names_seen.extend(r.name for r in results)
    flags = [_("⚑ your instructor's grading will flag this part and score it 0:",
               "⚑ la calificación de tu instructor/a marcará esta parte y le pondrá 0:")]
    flags += [f"  - {w}" for w in _warnings]
    if not _warnings:
        flags = []
    if total and passed == total and not flags:
        print(summary_line(passed, total))
        if any(r.generated for r in results) and not _hidden:
            print(_("  (your instructor's grading runs more generated cases, with other seeds)",
                    "  (la calificación de tu instructor/a ejecuta más casos generados, con "
                    "otras semillas)"))
        return
    not_started = all(r.not_implemented for r in results if not r.ok)
    lines = [*flags, summary_line(passed, total)]
    detailed = 0
    for r in results:
        if r.ok:
            lines.append(f"  ✓ {r.name}")
            continue
        lines.append(f"  ✗ {r.name}")
        if detailed < _detailed and not not_started:
            lines.extend(f"      {d}" for d in r.details)
            detailed += 1
    if detailed < total - passed and not not_started:
        lines.append(_(
            "  (details shown for the first {n} failed checks; fix those and run again)",
            "  (se muestran detalles de las {n} primeras comprobaciones fallidas; "
            "corrígelas y vuelve a ejecutar)",
        ).format(n=detailed))
    if not_started:
        lines.append(_("  (not implemented yet: NotImplementedError)",
                       "  (todavía sin implementar: NotImplementedError)"))
        lines.append(_(
            "Hint: fill in the cells marked # YOUR CODE HERE, run them, then run this cell.",
            "Pista: completa las celdas marcadas con # YOUR CODE HERE, ejecútalas y luego "
            "ejecuta esta celda.",
        ))
    raise ChecksFailed("\n".join(lines), passed, total)


# --------------------------------------------------------------------------- running cases


class _Stuck(BaseException):
    """Raised by the alarm; a BaseException so that ``except Exception`` cannot swallow it.
    ``waited`` tells a case that waited too long from one that computed too long."""

    def __init__(self, waited: bool = False) -> None:
        super().__init__()
        self.waited = waited


@contextlib.contextmanager
def _time_limit(seconds: float, wait: float | None = None):
    """Interrupt the block once it has used ``seconds`` of CPU time, or waited ``wait``
    seconds of wall time, where the timers exist and we own the main thread."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def on_cpu(signum: int, frame: Any) -> None:
        raise _Stuck()

    def on_wall(signum: int, frame: Any) -> None:
        raise _Stuck(waited=True)

    previous = signal.signal(signal.SIGPROF, on_cpu), signal.signal(signal.SIGALRM, on_wall)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, wait or CASE_WAIT_LIMIT))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, previous[0])
        signal.signal(signal.SIGALRM, previous[1])


@dataclass
class _Outcome:
    value: Any = None
    error: BaseException | None = None


class _Collector(logging.Handler):
    """Keeps the log records of the code being checked: they are behaviour, not output."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


_collector: _Collector | None = None


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """No prints and no log lines reach the graded cell's output; log records are kept (see
    :func:`errors_logged`) by a handler that stands in for the root logger's own."""
    global _collector
    sink = io.StringIO()
    root = logging.getLogger()
    handlers, level, previous = root.handlers[:], root.level, _collector
    _collector = _Collector()
    root.handlers[:] = [_collector]
    root.setLevel(logging.DEBUG)
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        _collector = previous


#: For a checker's own runs of the reference: nothing they print or log reaches the cell.
quiet = _quiet


def errors_logged() -> int:
    """How many records of level ERROR or above the code being checked has logged so far."""
    if _collector is None:
        return 0
    return sum(r.levelno >= logging.ERROR for r in _collector.records)


def _run(thunk: Callable[[], Any]) -> _Outcome:
    """Run the learner's code with its prints swallowed and a time limit."""
    try:
        with _quiet(), _time_limit(CASE_TIME_LIMIT):
            return _Outcome(value=thunk())
    except _Stuck as exc:
        return _Outcome(error=exc)
    except Exception as exc:  # the learner's bug is data here, not a crash of the checker
        return _Outcome(error=exc)


def _not_implemented_line() -> str:
    return _("not implemented yet (NotImplementedError)",
             "todavía sin implementar (NotImplementedError)")


def _not_started(name: str) -> CaseResult:
    line = _label(_("got:", "obtenido:")) + _not_implemented_line()
    return CaseResult(name, False, [line], not_implemented=True)


def _describe_error(exc: BaseException) -> str:
    if isinstance(exc, _Stuck) and exc.waited:
        wait = max(CASE_TIME_LIMIT, CASE_WAIT_LIMIT)
        return _(
            f"waited more than {wait:g} s (a read, a join or a lock that never returns?)",
            f"esperó más de {wait:g} s (¿una lectura, un join o un candado que nunca retorna?)",
        )
    if isinstance(exc, _Stuck):
        return _(
            f"used more than {CASE_TIME_LIMIT:g} s of CPU (an endless loop?)",
            f"usó más de {CASE_TIME_LIMIT:g} s de CPU (¿un bucle infinito?)",
        )
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return _("raised ", "lanzó ") + _short(text, plain=True)


def _short(value: Any, plain: bool = False, width: int = _MAX_REPR) -> str:
    text = value if plain else _show(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def cut_pair(expected: str, got: str, width: int = _MAX_REPR) -> tuple[str, str]:
    """Both texts cut to ``width`` around their first difference, so that it stays in view."""
    if len(expected) <= width and len(got) <= width:
        return expected, got
    at = next((i for i, (a, b) in enumerate(zip(expected, got, strict=False)) if a != b),
              min(len(expected), len(got)))
    start = max(0, at - width // 3)

    def window(text: str) -> str:
        piece = text[start : start + width]
        return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")

    return window(expected), window(got)


def _show(value: Any) -> str:
    """repr(), except that error instances show as <ErrorClassName attr=value ...>."""
    if isinstance(value, BaseException):
        return repr(Seen.of(value))
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


class Err:
    """Stands for "an instance of the error class called ``name``" in expected values, with
    the given attributes (``Err("MessageTooLarge", size=40, limit=32)``)."""

    def __init__(self, name: str, **attrs: Any) -> None:
        self.name = name
        self.attrs = attrs

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Err):
            return other.name == self.name and other.attrs == self.attrs
        if isinstance(other, Seen):  # a returned error, as seen() shows it
            attrs = dict(other.attrs)
            return (not other.raised and other.type == self.name
                    and all(_equal(attrs.get(k, _MISSING), v) for k, v in self.attrs.items()))
        return (isinstance(other, BaseException) and type(other).__name__ == self.name
                and all(_equal(getattr(other, k, _MISSING), v) for k, v in self.attrs.items()))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "<" + " ".join([self.name, *(f"{k}={v!r}" for k, v in self.attrs.items())]) + ">"


_MISSING = object()


def _label(text: str) -> str:
    return f"{text:<10}"


def case(
    name: str,
    thunk: Callable[[], Any],
    expected: Any,
    *,
    given: str | None = None,
    hint: str | Callable[[Any], str | None] | None = None,
    normalize: Callable[[Any], Any] | None = None,
) -> CaseResult:
    """Run ``thunk`` and compare what it returns (after ``normalize``) with ``expected``.

    ``hint`` may be a function of what came back (as compared, or the Seen of what the thunk
    raised): the hint the evidence shows, or None for no hint."""
    outcome = _run(thunk)
    if isinstance(outcome.error, NotImplementedError):
        return _not_started(name)
    details: list[str] = []
    if given is not None:
        details.append(_label(_("input:", "entrada:")) + _short(given, plain=True))
    if outcome.error is not None:
        details.append(_label(_("expected:", "esperado:")) + _short(expected))
        details.append(_label(_("got:", "obtenido:")) + _describe_error(outcome.error))
        text = _hint_for(hint, Seen.of(outcome.error, raised=True))
        if text:
            details.append(_label(_("hint:", "pista:")) + text)
        return CaseResult(name, False, details)
    got = seen(outcome.value)
    if normalize is not None:
        try:
            got = normalize(got)
        except Exception:
            pass
    if _equal(got, expected):
        return CaseResult(name, True)
    # got is plain data (tuples became lists): show expected the same way, so that the text
    # differs where the values do, not where a tuple and a list merely print differently
    want, have = cut_pair(_show(_as_lists(expected)), _show(got))
    details.append(_label(_("expected:", "esperado:")) + want)
    details.append(_label(_("got:", "obtenido:")) + have)
    text = _hint_for(hint, got)
    if text:
        details.append(_label(_("hint:", "pista:")) + text)
    return CaseResult(name, False, details)


def _as_lists(value: Any) -> Any:
    """``value`` with its tuples as lists (in lists, tuples and dicts), the way seen() shows
    what came back; anything else (an Err, say) as it is."""
    if isinstance(value, list | tuple):
        return [_as_lists(v) for v in value]
    if type(value) is dict:
        return {k: _as_lists(v) for k, v in value.items()}
    return value


def _hint_for(hint: str | Callable[[Any], str | None] | None, got: Any) -> str | None:
    if not callable(hint):
        return hint
    try:
        return hint(got)
    except Exception:  # a hint that cannot read this value gives none
        return None


def predicate(
    name: str,
    thunk: Callable[[], Any],
    test: Callable[[Any], bool],
    expectation: str,
    *,
    given: str | None = None,
    hint: str | None = None,
) -> CaseResult:
    """Like :func:`case`, for results that must satisfy ``test`` rather than equal a value."""
    outcome = _run(thunk)
    if isinstance(outcome.error, NotImplementedError):
        return _not_started(name)
    details: list[str] = []
    if given is not None:
        details.append(_label(_("input:", "entrada:")) + _short(given, plain=True))
    details.append(_label(_("expected:", "esperado:")) + expectation)
    if outcome.error is not None:
        details.append(_label(_("got:", "obtenido:")) + _describe_error(outcome.error))
        if hint:
            details.append(_label(_("hint:", "pista:")) + hint)
        return CaseResult(name, False, details)
    value = seen(outcome.value)
    try:
        ok = bool(test(value))
    except Exception:
        ok = False
    if ok:
        return CaseResult(name, True)
    have = _short(value)
    if isinstance(value, Seen) and value.message:
        have += f"  ({value.message})"  # an error raised inside: say why
    details.append(_label(_("got:", "obtenido:")) + have)
    if hint:
        details.append(_label(_("hint:", "pista:")) + hint)
    return CaseResult(name, False, details)


def _equal(got: Any, expected: Any) -> bool:
    """Equality that keeps True apart from 1 (JSON does, so the checks must too)."""
    if isinstance(expected, Err):
        return expected == got
    if isinstance(expected, bool) or isinstance(got, bool):
        return type(got) is type(expected) and got == expected
    if isinstance(expected, dict):
        return (isinstance(got, dict) and got.keys() == expected.keys()
                and all(_equal(got[k], expected[k]) for k in expected))
    if isinstance(expected, list | tuple):
        return (isinstance(got, list | tuple) and len(got) == len(expected)
                and all(_equal(g, e) for g, e in zip(got, expected, strict=True)))
    try:
        return bool(got == expected)
    except Exception:
        return False


def error_shape(response: Any) -> Any:
    """Keep what the checks compare in a response: id, code and message (expected values say
    ANY_TEXT for the message: its wording is free, but it must be a string)."""
    if not isinstance(response, dict):
        return response
    shape: dict[str, Any] = {k: response[k] for k in ("jsonrpc", "id") if k in response}
    error = response.get("error")
    if isinstance(error, dict):
        shape["error"] = {"code": error.get("code"), "message": error.get("message")}
    else:
        shape.update({k: v for k, v in response.items() if k not in shape})
    return shape


class _AnyText:
    """In an expected value: any string will do (error messages are the learner's to word)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return _("<any text>", "<cualquier texto>")


ANY_TEXT: Any = _AnyText()


# --------------------------------------------------------------------------- differential checks
#
# Beside its hand-written cases, every checker compares the learner's code with mcpkit's own
# layer (the reference) on inputs drawn from a seeded generator. A *trial* runs one
# implementation on one input and returns its trace: a list of steps, each a label (what was
# called) and what was seen (a value, or a Seen for an error returned or raised). Traces are
# compared step by step; on the first input where they differ, the input is shrunk (smaller
# candidates are tried while they still differ) and the report shows the smallest one, the
# first step that differs, what mcpkit did and what the learner's code did.
#
# The notebook always uses DEFAULT_SEED and the base number of cases, so a graded cell says
# the same thing on every run. The class grader calls configure() with a seed and a scale the
# learner has not seen, so hard-coding what the notebook showed does not pay.

DEFAULT_SEED = 20260728
#: Stop drawing new inputs after this many seconds (a slow but correct solution still passes).
PROPERTY_SECONDS = 3.0
#: Inputs tried while shrinking a failing one, at most.
SHRINK_ATTEMPTS = 400
_seed: int = DEFAULT_SEED
_scale: int = 1
_hidden = False

T = TypeVar("T")


def configure(seed: int | None = None, scale: int = 1, every_detail: bool = False) -> None:
    """Set the seed and the case multiplier of every differential check (the class grader's
    hidden run). ``configure()`` goes back to the notebook's fixed seed. ``every_detail``:
    report the details of every failed check, not only the first few."""
    global _seed, _scale, _hidden, _detailed
    _detailed = sys.maxsize if every_detail else MAX_DETAILED_FAILURES
    _seed = DEFAULT_SEED if seed is None else seed
    _scale = max(1, scale)
    _hidden = seed is not None or scale > 1


@dataclass(frozen=True)
class Seen:
    """An error as the checks compare it: its class name, the attributes that carry meaning
    (``size``/``limit`` of MessageTooLarge, ``code``/``data`` of a JsonRpcError), and whether
    it was raised or returned. Its message text is free."""

    type: str
    attrs: tuple[tuple[str, Any], ...] = ()
    raised: bool = False
    #: Its text, shown to the learner beside an unexpected error; never compared.
    message: str = field(default="", compare=False)

    MEANINGFUL = ("size", "limit", "code", "data")

    @classmethod
    def of(cls, exc: BaseException, raised: bool = False) -> Seen:
        # Through seen(): an attribute (or a class name) cannot bend == either.
        attrs = tuple((a, _freeze(seen(getattr(exc, a)))) for a in cls.MEANINGFUL
                      if hasattr(exc, a))
        try:
            message = str.__str__(str(exc))[:200]
        except Exception:  # a learner's exception whose __str__ fails
            message = ""
        return cls(seen(type(exc).__name__), attrs, raised, message)

    def __repr__(self) -> str:
        inner = " ".join([self.type, *(f"{k}={v!r}" for k, v in self.attrs)])
        return (_("raised ", "lanzó ") if self.raised else "") + f"<{inner}>"


def _freeze(value: Any) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


_PLAIN = (type(None), bool, int, float, str, bytes)


@dataclass(frozen=True)
class Opaque:
    """Something that is not plain data (a learner's own object): shown by its type, equal
    only to itself, so an object that claims to equal everything gains nothing."""

    type: str

    def __repr__(self) -> str:
        return f"<{self.type} object>"


def seen(value: Any) -> Any:
    """A value as compared: plain data only. Error instances become Seen; lists, tuples and
    dicts are rebuilt from their contents (subclasses cannot bend ``==``); str, int and
    bytes subclasses become the plain type; anything else is Opaque."""
    try:
        return _seen(value)
    except RecursionError:  # a hostile, deeply nested value: compared by its outer type
        return Opaque(f"{type(value).__name__}, nested too deeply to show")


def _seen(value: Any) -> Any:
    kind = type(value)
    if kind in _PLAIN or kind in (Seen, Opaque):
        return value
    if isinstance(value, BaseException):
        return Seen.of(value)
    if isinstance(value, list | tuple):
        return [_seen(v) for v in (list.__iter__(value) if isinstance(value, list)
                                  else tuple.__iter__(value))]
    if isinstance(value, dict):
        return {_seen(k): _seen(v) for k, v in dict.items(value)}
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    # The base type's own slot, not the subclass's: an overridden __str__ or __eq__ is ignored.
    if isinstance(value, str):
        return str.__getitem__(value, slice(None))
    if isinstance(value, bytes):
        return bytes.__getitem__(value, slice(None))
    if isinstance(value, int):
        return int.__add__(value, 0)
    if isinstance(value, float):
        return float.__add__(value, 0.0)
    return Opaque(kind.__name__)


def attempt(thunk: Callable[[], Any], plain: bool = True) -> Any:
    """Call ``thunk``: what it returned (as :func:`seen` shows it, unless ``plain`` is false:
    an instance the check goes on to use), or a Seen with ``raised`` set.

    NotImplementedError and the time limit pass through: they end the whole check.
    """
    try:
        value = thunk()
    except (NotImplementedError, _Stuck):
        raise
    except Exception as exc:
        return Seen.of(exc, raised=True)
    return seen(value) if plain else value


@dataclass
class Step:
    label: str
    seen: Any


class Gen(random.Random):
    """A seeded random source with helpers for JSON-RPC-shaped inputs."""

    TEXTS = ("", "a", "ping", "café", "ñandú ☕", "line\nbreak", 'quote "q"', "tab\there",
             "\\", "😀", "x" * 30)

    def text(self) -> str:
        return self.choice(self.TEXTS)

    def json_id(self) -> Any:
        """An id of every JSON type, the usual ones more often."""
        return self.choice([0, 1, 7, -3, 2**53, "a-1", "", "é", True, False, None, 1.5, 2.0,
                            [1], {"id": 1}, self.randint(1, 999), f"r{self.randint(1, 99)}"])

    def scalar(self) -> Any:
        return self.choice([None, True, False, 0, -1, 42, 3.25, "", "x", "café", 10**20])

    def json_value(self, depth: int = 2) -> Any:
        roll = self.random()
        if depth <= 0 or roll < 0.5:
            return self.choice([self.scalar(), self.text()])
        if roll < 0.75:
            return [self.json_value(depth - 1) for _ in range(self.randint(0, 3))]
        return {self.choice(["a", "b", "id", "text", "é", "k"]): self.json_value(depth - 1)
                for _ in range(self.randint(0, 3))}

    def json_object(self, depth: int = 2) -> dict[str, Any]:
        return {self.choice(["a", "b", "n", "text", "é", "items"]): self.json_value(depth - 1)
                for _ in range(self.randint(0, 3))}

    def split(self, data: bytes, pieces: int | None = None) -> list[bytes]:
        """``data`` cut at random places: whole, byte by byte, or anything between."""
        if not data:
            return [data]
        style = self.random()
        if style < 0.1:
            return [data]
        if style < 0.2 and len(data) < 400:
            return [data[i : i + 1] for i in range(len(data))]
        count = pieces if pieces is not None else self.randint(1, min(12, len(data)))
        cuts = sorted(self.sample(range(1, len(data)), min(count, len(data) - 1)))
        parts = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        if self.random() < 0.2:  # an empty read now and then
            parts.insert(self.randrange(len(parts) + 1), b"")
        return parts


def cases_for(base: int) -> int:
    """How many generated cases a check with ``base`` cases runs in this run."""
    return base * _scale


def _first_difference(expected: list[Step], got: list[Step]) -> int | None:
    for i in range(max(len(expected), len(got))):
        if i >= len(expected) or i >= len(got) or not _equal(got[i].seen, expected[i].seen):
            return i
    return None


def differential(
    name: str,
    *,
    key: str,
    generate: Callable[[Gen], T],
    trial: Callable[[Any, T], list[Step]],
    reference: Any,
    learner: Any,
    show: Callable[[T], str],
    cases: int = 100,
    shrink: Callable[[T], Iterator[T]] | None = None,
    hint: Callable[[T, Step | None, Step | None], str | None] | None = None,
) -> CaseResult:
    """Compare ``trial(learner, x)`` with ``trial(reference, x)`` on generated inputs ``x``.

    ``key`` names the check in the seed (so each check draws its own inputs, whatever the
    language); ``show`` turns an input into text for the report; ``shrink`` proposes smaller
    variants of an input; ``hint`` may say what the difference usually means.
    """
    rng = Gen(f"{_seed}/{key}")
    total = cases_for(cases)
    started = time.monotonic()

    def differs(x: T) -> tuple[list[Step], list[Step], int] | None:
        with _quiet():
            expected = trial(reference, x)
        outcome = _run(lambda: trial(learner, x))
        if outcome.error is not None:
            if isinstance(outcome.error, NotImplementedError | _Stuck):
                raise outcome.error
            got = [Step(_("(the check's set-up)", "(la preparación de la comprobación)"),
                        Seen.of(outcome.error, raised=True))]
        else:
            got = outcome.value
        at = _first_difference(expected, got)
        return None if at is None else (expected, got, at)

    try:
        for number in range(1, total + 1):
            if time.monotonic() - started > PROPERTY_SECONDS * _scale:
                break
            x = generate(rng)
            found = differs(x)
            if found is None:
                continue
            x, found = _shrink(x, found, differs, shrink)
            return _difference_report(name, number, total, x, found, show, hint)
    except NotImplementedError:
        return _not_started(name)
    except _Stuck as exc:
        return CaseResult(name, False, [_label(_("got:", "obtenido:")) + _describe_error(exc)],
                          generated=True)
    return CaseResult(name, True, generated=True)


def _shrink(x: T, found: Any, differs: Callable[[T], Any],
            shrink: Callable[[T], Iterator[T]] | None) -> tuple[T, Any]:
    """Greedy shrinking: take the first smaller candidate that still differs, repeat."""
    if shrink is None:
        return x, found
    tries = 0
    improved = True
    while improved and tries < SHRINK_ATTEMPTS:
        improved = False
        for candidate in shrink(x):
            tries += 1
            if tries > SHRINK_ATTEMPTS:
                break
            try:
                again = differs(candidate)
            except (NotImplementedError, _Stuck):
                continue
            if again is not None:
                x, found, improved = candidate, again, True
                break
    return x, found


def _difference_report(name: str, number: int, total: int, x: Any, found: Any,
                       show: Callable[[Any], str], hint: Callable[..., str | None] | None
                       ) -> CaseResult:
    expected, got, at = found
    step_e = expected[at] if at < len(expected) else None
    step_g = got[at] if at < len(got) else None
    nothing = _("(nothing more: the trace ends here)", "(nada más: la traza termina aquí)")
    want, have = cut_pair(_show(step_e.seen) if step_e else nothing,
                          _show(step_g.seen) if step_g else nothing)
    got_error = step_g.seen if step_g and isinstance(step_g.seen, Seen) else None
    if got_error and got_error.message and not (
            step_e and isinstance(step_e.seen, Seen) and step_e.seen.type == got_error.type):
        have += f"  ({got_error.message})"  # an error the reference did not raise: say why
    details = [
        _("differs from the reference on generated case {n} of {t}; the smallest input found:",
          "difiere de la referencia en el caso generado {n} de {t}; la entrada más pequeña "
          "hallada:"
          ).format(n=number, t=total),
        _label(_("input:", "entrada:")) + _short(show(x), plain=True, width=3 * _MAX_REPR),
        _label(_("step:", "paso:")) + _short((step_e or step_g).label, plain=True),  # type: ignore
        _label(_("expected:", "esperado:")) + want,
        _label(_("got:", "obtenido:")) + have,
    ]
    text = hint(x, step_e, step_g) if hint else None
    if text:
        details.append(_label(_("hint:", "pista:")) + text)
    return CaseResult(name, False, details, generated=True)



def sequence_case(name: str, expected: list[Step], run: Callable[[], list[Step]],
                  hint: str) -> CaseResult:
    """A hand-written sequence (messages in, answers and state out), compared step by step
    with the reference's: a failure shows the step where the two first part, the steps
    before it, and the error the learner's code raised there, if any."""
    outcome = _run(run)
    if isinstance(outcome.error, NotImplementedError):
        return _not_started(name)
    details: list[str] = []
    if outcome.error is not None:
        return CaseResult(name, False, [_label(_("got:", "obtenido:")) + repr(outcome.error),
                                        _label(_("hint:", "pista:")) + hint])
    got: list[Step] = outcome.value
    at = _first_difference(expected, got)
    if at is None:
        return CaseResult(name, True)
    nothing = _("(nothing more)", "(nada más)")
    step_e = expected[at] if at < len(expected) else None
    step_g = got[at] if at < len(got) else None
    before = [s.label for s in expected[:at]][-3:]
    if before:
        more = "… " if at > 3 else ""
        details.append(_label(_("after:", "tras:")) + _short(more + "; ".join(before),
                                                              plain=True, width=300))
    details.append(_label(_("step:", "paso:")) + _short((step_e or step_g).label,  # type: ignore
                                                          plain=True, width=300))
    want, have = cut_pair(_show(step_e.seen) if step_e else nothing,
                          _show(step_g.seen) if step_g else nothing)
    if step_g is not None and isinstance(step_g.seen, Seen) and step_g.seen.message:
        have += f"  ({step_g.seen.message})"
    details += [_label(_("expected:", "esperado:")) + want,
                _label(_("got:", "obtenido:")) + have, _label(_("hint:", "pista:")) + hint]
    return CaseResult(name, False, details)


@contextlib.contextmanager
def references_for(function: Any, **swaps: Any) -> Iterator[None]:
    """While a later part is checked, the earlier parts' functions that the learner's
    ``function`` calls by name (``parse_message``, ``classify``...) are the reference's, so a
    bug in an earlier part costs that part only. Names the learner's module does not define as
    callables are left alone; everything is put back afterwards."""
    names = getattr(function, "__globals__", None)
    own = ({k: names[k] for k in swaps if callable(names.get(k))}
           if isinstance(names, dict) else {})
    if own:
        names.update({k: swaps[k] for k in own})
    try:
        yield
    finally:
        if own:
            names.update(own)


def shared_state(cls: Any) -> list[str]:
    """Mutable containers in a class body: every instance shares them (a classic slip)."""
    if not isinstance(cls, type):
        return []
    return [name for name, value in vars(cls).items() if not name.startswith("__")
            and isinstance(value, list | dict | set | bytearray)]


def drop_each(items: list[Any]) -> Iterator[list[Any]]:
    """Shrink candidates for a list: without one item (from the end), then halves."""
    n = len(items)
    if n > 3:
        yield items[: n // 2]
        yield items[n // 2 :]
    for i in reversed(range(n)):
        yield items[:i] + items[i + 1 :]


def record_returns(code: Any, name: str, into: list[Any]) -> Callable[[], None]:
    """Let the function ``name`` of the notebook that defined ``code`` (a learner's class or
    function, which calls the setup cell's helpers by name) also keep in ``into`` everything
    it returns; returns what undoes that. The checks then hold what the learner's code got
    (a process it started), so no garbage collector tidies it up before it is looked at. Code
    that does not call the helper by that name is simply not watched."""
    functions = vars(code).values() if isinstance(code, type) else [code]
    namespace = next((f.__globals__ for f in functions if isinstance(f, types.FunctionType)),
                     None)
    original = namespace.get(name) if namespace is not None else None
    if namespace is None or not callable(original):
        return lambda: None

    def recorded(*args: Any, **kwargs: Any) -> Any:
        value = original(*args, **kwargs)
        into.append(value)
        return value

    namespace[name] = recorded

    def undo() -> None:
        if namespace.get(name) is recorded:
            namespace[name] = original

    return undo


def child_processes() -> set[int]:
    """Processes whose parent is this one, running or zombie (Linux's /proc): what a check
    compares before and after, so that a child left behind is seen."""
    me, found = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            found.add(int(entry))
    return found
