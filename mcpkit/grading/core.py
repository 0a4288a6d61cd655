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
"""


from __future__ import annotations

import contextlib
import io
import logging
import signal
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

LANGUAGES = ("en", "es")
#: Seconds a single case may run before it counts as stuck (Unix main thread only).
CASE_TIME_LIMIT = 5.0
#: Failed cases reported in full; the rest are listed by name only.
MAX_DETAILED_FAILURES = 6
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


def summary_line(passed: int, total: int) -> str:
    mark = "✓" if passed == total else "✗"
    return f"{mark} {passed}/{total} " + _("checks passed", "comprobaciones superadas")


def run_checks(results: Iterable[CaseResult]) -> None:
    """Print one fixed line if every case passed; otherwise raise :class:`ChecksFailed`."""
    results = list(results)
    total = len(results)
    passed = sum(r.ok for r in results)
    if total and passed == total:
        print(summary_line(passed, total))
        return
    not_started = all(r.not_implemented for r in results if not r.ok)
    lines = [summary_line(passed, total)]
    detailed = 0
    for r in results:
        if r.ok:
            lines.append(f"  ✓ {r.name}")
            continue
        lines.append(f"  ✗ {r.name}")
        if detailed < MAX_DETAILED_FAILURES and not not_started:
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
    """Raised by the alarm; a BaseException so that ``except Exception`` cannot swallow it."""


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Interrupt the block after ``seconds`` where SIGALRM exists and we own the main thread."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise _Stuck()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class _Outcome:
    value: Any = None
    error: BaseException | None = None


def _run(thunk: Callable[[], Any]) -> _Outcome:
    """Run the learner's code with its prints swallowed and a time limit."""
    sink = io.StringIO()
    logging.disable(logging.CRITICAL)  # log lines (ours or the learner's) are not output
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            with _time_limit(CASE_TIME_LIMIT):
                return _Outcome(value=thunk())
    except _Stuck as exc:
        return _Outcome(error=exc)
    except Exception as exc:  # the learner's bug is data here, not a crash of the checker
        return _Outcome(error=exc)
    finally:
        logging.disable(logging.NOTSET)


def _not_implemented_line() -> str:
    return _("not implemented yet (NotImplementedError)",
             "todavía sin implementar (NotImplementedError)")


def _not_started(name: str) -> CaseResult:
    line = _label(_("got:", "obtenido:")) + _not_implemented_line()
    return CaseResult(name, False, [line], not_implemented=True)


def _describe_error(exc: BaseException) -> str:
    if isinstance(exc, _Stuck):
        return _(
            f"took more than {CASE_TIME_LIMIT:g} s (an endless loop?)",
            f"tardó más de {CASE_TIME_LIMIT:g} s (¿un bucle infinito?)",
        )
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return _("raised ", "lanzó ") + _short(text, plain=True)


def _short(value: Any, plain: bool = False) -> str:
    text = value if plain else _show(value)
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 1] + "…"


def _show(value: Any) -> str:
    """repr(), except that error instances show as <ErrorClassName>."""
    if isinstance(value, BaseException):
        return f"<{type(value).__name__}>"
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


class Err:
    """Stands for "an instance of the error class called ``name``" in expected values."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Err):
            return other.name == self.name
        return isinstance(other, BaseException) and type(other).__name__ == self.name

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _label(text: str) -> str:
    return f"{text:<10}"


def case(
    name: str,
    thunk: Callable[[], Any],
    expected: Any,
    *,
    given: str | None = None,
    hint: str | None = None,
    normalize: Callable[[Any], Any] | None = None,
) -> CaseResult:
    """Run ``thunk`` and compare what it returns (after ``normalize``) with ``expected``."""
    outcome = _run(thunk)
    if isinstance(outcome.error, NotImplementedError):
        return _not_started(name)
    details: list[str] = []
    if given is not None:
        details.append(_label(_("input:", "entrada:")) + _short(given, plain=True))
    details.append(_label(_("expected:", "esperado:")) + _short(expected))
    if outcome.error is not None:
        details.append(_label(_("got:", "obtenido:")) + _describe_error(outcome.error))
        return CaseResult(name, False, details)
    got = outcome.value
    if normalize is not None:
        try:
            got = normalize(got)
        except Exception:
            pass
    if _equal(got, expected):
        return CaseResult(name, True)
    details.append(_label(_("got:", "obtenido:")) + _short(got))
    if hint:
        details.append(_label(_("hint:", "pista:")) + hint)
    return CaseResult(name, False, details)


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
        return CaseResult(name, False, details)
    try:
        ok = bool(test(outcome.value))
    except Exception:
        ok = False
    if ok:
        return CaseResult(name, True)
    details.append(_label(_("got:", "obtenido:")) + _short(outcome.value))
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
    """Keep what the checks compare in a response: id and code (the text is free)."""
    if not isinstance(response, dict):
        return response
    shape: dict[str, Any] = {k: response[k] for k in ("jsonrpc", "id") if k in response}
    error = response.get("error")
    if isinstance(error, dict):
        shape["error"] = {"code": error.get("code"),
                          "message": "…" if isinstance(error.get("message"), str) else None}
    else:
        shape.update({k: v for k, v in response.items() if k not in shape})
    return shape
