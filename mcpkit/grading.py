"""Checks for the course's graded cells, with feedback in the learner's language.

A graded cell holds a single call such as ``grading.check_ndjson_decoder(NdjsonDecoder)``.
The checker runs the learner's code on many cases, the tricky ones included, and hands the
outcomes to :func:`run_checks`, which either prints one fixed line::

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
import json
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "LANGUAGES",
    "CaseResult",
    "ChecksFailed",
    "check_call_tool",
    "check_classify",
    "check_content_length_decoder",
    "check_dispatcher",
    "check_encoders",
    "check_error_for",
    "check_ndjson_decoder",
    "check_note_resources",
    "check_note_tools",
    "check_notes_server",
    "check_parse_message",
    "check_serve",
    "check_setup",
    "get_language",
    "run_checks",
    "set_language",
]

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


# --------------------------------------------------------------------------- lesson 00


def check_setup() -> None:
    """The warm-up cell of lesson 00: is this kernel ready for the course?"""

    def python_version() -> bool:
        return sys.version_info >= (3, 11)

    def imports() -> bool:
        from . import dispatch, framing, jsonrpc  # noqa: F401

        return True

    def utf8_round_trip() -> str:
        from .framing import NdjsonDecoder, encode_ndjson

        return NdjsonDecoder().feed(encode_ndjson({"text": "¡hola, café! 👋"}))[0]["text"]

    def nbval_available() -> bool:
        import importlib.util

        return importlib.util.find_spec("nbval") is not None

    run_checks([
        case(_("Python 3.11 or newer", "Python 3.11 o posterior"), python_version, True),
        case(_("mcpkit's framing, jsonrpc and dispatch modules import",
               "los módulos framing, jsonrpc y dispatch de mcpkit se importan"), imports, True),
        case(_("text survives an encode/decode round trip, accents and emoji included",
               "el texto sobrevive a codificar y decodificar, con tildes y emojis"),
             utf8_round_trip, "¡hola, café! 👋"),
        case(_("nbval is installed, so you can grade yourself",
               "nbval está instalado, así que puedes calificarte"),
             nbval_available, True,
             hint=_("pip install nbval", "pip install nbval")),
    ])


# --------------------------------------------------------------------------- lab 01: framing


def _items(value: Any) -> Any:
    """Normalize what feed() returned: a list stays a list, a tuple becomes one."""
    return list(value) if isinstance(value, tuple) else value


def _feed_all(cls: type, chunks: Sequence[bytes], **kwargs: Any) -> Callable[[], list]:
    def run() -> list:
        decoder = cls(**kwargs)
        out: list = []
        for chunk in chunks:
            items = decoder.feed(chunk)
            if not isinstance(items, list | tuple):
                raise TypeError(_(f"feed() returned {type(items).__name__}, not a list",
                                  f"feed() devolvió {type(items).__name__}, no una lista"))
            out.extend(items)
        return out

    return run


def _feed_each(cls: type, chunks: Sequence[bytes], **kwargs: Any) -> Callable[[], list]:
    def run() -> list:
        decoder = cls(**kwargs)
        return [_items(decoder.feed(chunk)) for chunk in chunks]

    return run


def _decoder_cases(cls: type, results: list[CaseResult]) -> Callable[..., None]:
    """``add(name, chunks, expected, hint=None, each=False, **decoder_kwargs)``: one case
    that feeds ``chunks`` to a fresh ``cls`` decoder, appended to ``results``."""

    def add(name: str, chunks: list[bytes], expected: Any, hint: str | None = None,
            each: bool = False, **kwargs: Any) -> None:
        run = (_feed_each if each else _feed_all)(cls, chunks, **kwargs)
        results.append(case(name, run, expected, given=_chunks_text(cls, chunks, **kwargs),
                            hint=hint, normalize=_items))

    return add


def _chunks_text(cls: type, chunks: Sequence[bytes], **kwargs: Any) -> str:
    calls = " ; ".join(f"feed({c!r})" for c in chunks)
    if len(calls) > 120 and len(chunks) > 3:
        calls = _(f"{len(chunks)} calls: ", f"{len(chunks)} llamadas: ") + " ; ".join(
            f"feed({c!r})" for c in chunks[:3]) + " ; …"
    if kwargs:
        args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        return f"{getattr(cls, '__name__', 'Decoder')}({args}) ; {calls}"
    return calls


def _byte_by_byte(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


def check_encoders(encode_ndjson: Callable, encode_content_length: Callable) -> None:
    """Lab 01, part 1: the two encoders."""
    samples = [
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, _("a ping request", "una solicitud ping")),
        ({"jsonrpc": "2.0", "method": "notifications/message",
          "params": {"data": "line one\nline two"}},
         _("a newline inside a string", "un salto de línea dentro de una cadena")),
        ({"jsonrpc": "2.0", "id": "é-1", "result": {"text": "café ☕"}},
         _("accents and emoji", "tildes y emojis")),
    ]
    results: list[CaseResult] = []
    for message, label in samples:
        def ndjson(m: Any = message) -> Any:
            return encode_ndjson(m)

        results.append(predicate(
            "encode_ndjson: " + label + _(": bytes ending in one newline",
                                          ": bytes que terminan en un único salto de línea"),
            ndjson,
            lambda out: isinstance(out, bytes) and out.endswith(b"\n") and out.count(b"\n") == 1,
            _("bytes with exactly one b'\\n', at the end",
              "bytes con exactamente un b'\\n', al final"),
            given=repr(message),
            hint=_("json.dumps escapes newlines inside strings; do not add any of your own",
                   "json.dumps escapa los saltos de línea de las cadenas; no añadas otros"),
        ))
        results.append(case(
            "encode_ndjson: " + label + _(": decodes back to the same message",
                                          ": se decodifica al mismo mensaje"),
            lambda m=message: json.loads(encode_ndjson(m).decode("utf-8")),
            message,
            given=repr(message),
        ))

        def content_length(m: Any = message) -> Any:
            out = encode_content_length(m)
            if not isinstance(out, bytes):
                return out
            head, sep, body = out.partition(b"\r\n\r\n")
            declared = None
            for line in head.split(b"\r\n"):
                name, _colon, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    declared = int(value.strip())
            return {"declared": declared, "body_bytes": len(body),
                    "message": json.loads(body.decode("utf-8")) if sep else None}

        def body_len(m: Any = message) -> int:
            return len(json.dumps(m, separators=(",", ":"), ensure_ascii=False).encode())

        results.append(predicate(
            "encode_content_length: " + label + _(": the header counts the body's bytes",
                                                  ": la cabecera cuenta los bytes del cuerpo"),
            content_length,
            lambda out, m=message: isinstance(out, dict) and out["message"] == m
            and out["declared"] == out["body_bytes"],
            _("Content-Length: N, a blank line (\\r\\n\\r\\n), then exactly N bytes of JSON",
              "Content-Length: N, una línea en blanco (\\r\\n\\r\\n) y exactamente N bytes de "
              "JSON"),
            given=repr(message),
            hint=_(f"count bytes, not characters: the compact JSON of this message is "
                   f"{body_len()} bytes long",
                   f"cuenta bytes, no caracteres: el JSON compacto de este mensaje ocupa "
                   f"{body_len()} bytes"),
        ))
    run_checks(results)


def check_parse_message(parse_message: Callable) -> None:
    """Lab 01, part 1: one complete message body to a value, or an error *returned*."""
    deep = b"[" * 100_000 + b"]" * 100_000
    rows = [
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', {"jsonrpc": "2.0", "id": 1,
                                                       "method": "ping"},
         _("a JSON object", "un objeto JSON"), None),
        ('{"text":"café ☕"}'.encode(), {"text": "café ☕"},
         _("UTF-8 text with accents and emoji", "texto UTF-8 con tildes y emojis"), None),
        (b'  {"id": 2}\r', {"id": 2},
         _("whitespace around the JSON is fine", "los espacios alrededor del JSON no molestan"),
         None),
        (b"[1, 2]", [1, 2], _("any JSON value, not only objects",
                              "cualquier valor JSON, no solo objetos"), None),
        (b'{"id": 1,}', Err("InvalidJson"),
         _("bad JSON: an InvalidJson instance is returned, not raised",
           "JSON inválido: se devuelve una instancia de InvalidJson, no se lanza"),
         _("return InvalidJson(reason) instead of raising",
           "devuelve InvalidJson(motivo) en lugar de lanzarla")),
        (b'{"text":"caf\xe9"}', Err("InvalidUtf8"),
         _("Latin-1 bytes are not UTF-8: InvalidUtf8", "bytes Latin-1 no son UTF-8: InvalidUtf8"),
         _("bytes.decode('utf-8') raises UnicodeDecodeError here",
           "bytes.decode('utf-8') lanza UnicodeDecodeError aquí")),
        (b"", Err("InvalidJson"), _("an empty body is not JSON", "un cuerpo vacío no es JSON"),
         None),
        (deep, Err("InvalidJson"),
         _("hostile input: 100,000 nested arrays give InvalidJson, not a crash",
           "entrada hostil: 100.000 arrays anidados dan InvalidJson, no un fallo"),
         _("json.loads raises RecursionError (not ValueError) on very deep nesting",
           "json.loads lanza RecursionError (no ValueError) con anidamientos muy profundos")),
    ]
    results = [
        case(name, lambda raw=raw: parse_message(raw), expected,
             given=_short(raw) if len(raw) < 200 else "b'[[[[…]]]]'", hint=hint)
        for raw, expected, name, hint in rows
    ]
    run_checks(results)


def check_ndjson_decoder(cls: type) -> None:
    """Lab 01, part 2: an incremental newline-delimited JSON decoder."""
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    pong = b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
    ping_v = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    pong_v = {"jsonrpc": "2.0", "id": 1, "result": {}}
    cafe = '{"text":"café"}\n'.encode()
    cut = cafe.index(b"\xc3") + 1  # between the two bytes of "é"
    long_line = b'{"text":"' + b"x" * 40 + b'"}\n'
    small, small_v = b'{"id":2}\n', {"id": 2}
    limit_ok = b'{"t":"' + b"y" * 24 + b'"}\n'  # 32 bytes before the newline

    results: list[CaseResult] = []
    add = _decoder_cases(cls, results)

    add(_("one whole message in one read", "un mensaje completo en una sola lectura"),
        [ping], [ping_v])
    add(_("two messages in one read, in order", "dos mensajes en una lectura, en orden"),
        [ping + pong], [ping_v, pong_v],
        hint=_("one read can hold many lines: return them all",
               "una lectura puede traer muchas líneas: devuélvelas todas"))
    add(_("a message split across two reads: nothing until the newline arrives",
          "un mensaje partido en dos lecturas: nada hasta que llega el salto de línea"),
        [ping[:15], ping[15:]], [[], [ping_v]], each=True,
        hint=_("keep the unfinished line in a buffer between calls",
               "guarda la línea inacabada en un búfer entre llamadas"))
    add(_("one byte per read", "un byte por lectura"), _byte_by_byte(ping + pong),
        [ping_v, pong_v])
    add(_("a UTF-8 character split across reads", "un carácter UTF-8 partido entre lecturas"),
        [cafe[:cut], cafe[cut:]], [{"text": "café"}],
        hint=_("buffer bytes and decode only complete lines: b'\\xc3' alone is not UTF-8",
               "acumula bytes y decodifica solo líneas completas: b'\\xc3' solo no es UTF-8"))
    add(_("the end of one message and the start of the next in one read",
          "el final de un mensaje y el comienzo del siguiente en una lectura"),
        [ping[:10], ping[10:] + pong[:10], pong[10:]], [ping_v, pong_v])
    add(_("blank lines and \\r\\n line ends are tolerated",
          "se toleran líneas en blanco y finales de línea \\r\\n"),
        [b"\n" + ping + b"\r\n\n" + pong.replace(b"\n", b"\r\n")], [ping_v, pong_v],
        hint=_("skip lines that are empty or only whitespace",
               "salta las líneas vacías o con solo espacios"))
    add(_("a newline escaped inside a string is not a line end",
          "un salto de línea escapado dentro de una cadena no es un fin de línea"),
        [b'{"text":"a\\nb"}\n'], [{"text": "a\nb"}])
    add(_("framing does not judge content: any JSON value is returned",
          "el enmarcado no juzga el contenido: se devuelve cualquier valor JSON"),
        [b"[1,2]\n3\n\"hi\"\n"], [[1, 2], 3, "hi"])
    add(_("bad JSON becomes an InvalidJson item, and decoding carries on",
          "un JSON inválido produce un elemento InvalidJson y la decodificación sigue"),
        [ping + b'{"jsonrpc": "2.0", oops}\n' + pong], [ping_v, Err("InvalidJson"), pong_v],
        hint=_("append an InvalidJson instance to the list instead of raising",
               "añade una instancia de InvalidJson a la lista en lugar de lanzarla"))
    add(_("bytes that are not UTF-8 become an InvalidUtf8 item",
          "los bytes que no son UTF-8 producen un elemento InvalidUtf8"),
        [b'{"text":"\xff\xfe"}\n' + pong], [Err("InvalidUtf8"), pong_v],
        hint=_("catch UnicodeDecodeError separately from json.JSONDecodeError",
               "captura UnicodeDecodeError aparte de json.JSONDecodeError"))
    add(_("a line of exactly max_message_size bytes is accepted",
          "se acepta una línea de exactamente max_message_size bytes"),
        [limit_ok], [{"t": "y" * 24}], max_message_size=32,
        hint=_("the limit counts the bytes of the line, without the newline",
               "el límite cuenta los bytes de la línea, sin el salto de línea"))
    add(_("a complete line over the limit becomes MessageTooLarge",
          "una línea completa por encima del límite produce MessageTooLarge"),
        [long_line + small], [Err("MessageTooLarge"), small_v], max_message_size=32)
    add(_("an unfinished line over the limit: reported once, the rest of it skipped",
          "una línea inacabada por encima del límite: se informa una vez y se salta el resto"),
        [long_line[:20], long_line[20:35], long_line[35:] + small],
        [Err("MessageTooLarge"), small_v], max_message_size=32,
        hint=_("once a line is too big, drop what you have and ignore bytes until the "
               "next newline, so memory stays bounded",
               "cuando una línea es demasiado grande, descarta lo acumulado e ignora bytes "
               "hasta el siguiente salto de línea, para que la memoria siga acotada"))
    add(_("feed(b'') returns an empty list", "feed(b'') devuelve una lista vacía"),
        [b""], [])
    run_checks(results)


def _cl(body: bytes, *headers: bytes) -> bytes:
    head = b"".join(h + b"\r\n" for h in headers) if headers else b""
    return b"Content-Length: %d\r\n%b\r\n%b" % (len(body), head, body)


def check_content_length_decoder(cls: type) -> None:
    """Lab 01, part 3: an incremental Content-Length (LSP-style) decoder."""
    ping_b = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    pong_b = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    ping_v = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    pong_v = {"jsonrpc": "2.0", "id": 1, "result": {}}
    ping, pong = _cl(ping_b), _cl(pong_b)
    cafe_b = '{"text":"café ☕"}'.encode()
    pretty_b = b'{\r\n\r\n  "id": 7\r\n}'
    results: list[CaseResult] = []
    add = _decoder_cases(cls, results)

    add(_("one whole message in one read", "un mensaje completo en una sola lectura"),
        [ping], [ping_v])
    add(_("Content-Length counts bytes, not characters",
          "Content-Length cuenta bytes, no caracteres"),
        [_cl(cafe_b) + pong], [{"text": "café ☕"}, pong_v],
        hint=_("'é' is 2 bytes and '☕' is 3 in UTF-8: slice the bytes before decoding",
               "'é' ocupa 2 bytes y '☕' 3 en UTF-8: corta los bytes antes de decodificar"))
    add(_("two messages in one read, in order", "dos mensajes en una lectura, en orden"),
        [ping + pong], [ping_v, pong_v])
    add(_("the header split across reads", "la cabecera partida entre lecturas"),
        [ping[:9], ping[9:19], ping[19:]], [[], [], [ping_v]], each=True)
    add(_("the body split across reads", "el cuerpo partido entre lecturas"),
        [ping[:30], ping[30:]], [[], [ping_v]], each=True,
        hint=_("wait until all N body bytes have arrived",
               "espera a que lleguen los N bytes del cuerpo"))
    add(_("one byte per read", "un byte por lectura"), _byte_by_byte(ping + pong),
        [ping_v, pong_v])
    add(_("header names are case-insensitive", "los nombres de cabecera no distinguen "
          "mayúsculas de minúsculas"),
        [ping.replace(b"Content-Length", b"content-length")], [ping_v])
    add(_("other headers are ignored", "las demás cabeceras se ignoran"),
        [_cl(ping_b, b"Content-Type: application/vscode-jsonrpc; charset=utf-8") + pong],
        [ping_v, pong_v])
    add(_("a body may contain \\r\\n\\r\\n: trust the length, not the blank line",
          "un cuerpo puede contener \\r\\n\\r\\n: fíate de la longitud, no de la línea en "
          "blanco"),
        [_cl(pretty_b) + pong], [{"id": 7}, pong_v],
        hint=_("after the header section, take exactly Content-Length bytes",
               "tras la sección de cabeceras, toma exactamente Content-Length bytes"))
    add(_("a body that is not JSON becomes InvalidJson, and decoding carries on",
          "un cuerpo que no es JSON produce InvalidJson y la decodificación sigue"),
        [_cl(b"{oops}") + pong], [Err("InvalidJson"), pong_v])
    add(_("a header section without Content-Length becomes InvalidHeader",
          "una sección de cabeceras sin Content-Length produce InvalidHeader"),
        [b"Content-Type: application/json\r\n\r\n" + pong], [Err("InvalidHeader"), pong_v],
        hint=_("report the bad header section, drop it, and look for the next message",
               "informa de la sección de cabeceras errónea, descártala y busca el siguiente "
               "mensaje"))
    add(_("a length that is not a number becomes InvalidHeader",
          "una longitud que no es un número produce InvalidHeader"),
        [b"Content-Length: twelve\r\n\r\n" + pong], [Err("InvalidHeader"), pong_v])
    add(_("a declared length over the limit: MessageTooLarge, body skipped",
          "una longitud declarada por encima del límite: MessageTooLarge y se salta el cuerpo"),
        [_cl(b'{"big":"' + b"z" * 40 + b'"}') + pong], [Err("MessageTooLarge"), pong_v],
        max_message_size=45,
        hint=_("compare the declared length with max_message_size before reading the body, "
               "then skip exactly that many bytes",
               "compara la longitud declarada con max_message_size antes de leer el cuerpo, "
               "y luego salta exactamente esos bytes"))
    run_checks(results)


# --------------------------------------------------------------------------- lab 02: JSON-RPC


def _kind_or_error(fn: Callable, message: Any) -> Callable[[], Any]:
    def run() -> Any:
        try:
            return fn(message)
        except Exception as exc:
            if type(exc).__name__ == "InvalidRequest" or getattr(exc, "code", None) == -32600:
                return Err("InvalidRequest")
            raise

    return run


def check_classify(classify: Callable) -> None:
    """Lab 02, part 1: tell the four kinds of message apart, and reject the rest."""
    good = [
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "request"),
        ({"jsonrpc": "2.0", "id": "abc", "method": "ping", "params": {}}, "request"),
        ({"jsonrpc": "2.0", "id": 0, "method": "ping"}, "request"),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, "notification"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "result"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}},
         "error"),
        ({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
         "error"),
    ]
    names_good = [
        _("a request with an integer id", "una solicitud con id entero"),
        _("a request with a string id and params", "una solicitud con id de texto y params"),
        _("id 0 is a perfectly good id", "el id 0 es un id perfectamente válido"),
        _("a notification has no id", "una notificación no tiene id"),
        _("a result response", "una respuesta con resultado"),
        _("an error response", "una respuesta de error"),
        _("an error response with id null (the request was unreadable)",
          "una respuesta de error con id null (la solicitud era ilegible)"),
    ]
    bad = [
        ([{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
         _("a JSON array (batch): not supported", "un array JSON (lote): no admitido")),
        ("ping", _("a string is not a message", "una cadena no es un mensaje")),
        ({"id": 1, "method": "ping"}, _('"jsonrpc" missing', 'falta "jsonrpc"')),
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"},
         _('"jsonrpc" is not "2.0"', '"jsonrpc" no es "2.0"')),
        ({"jsonrpc": 2.0, "id": 1, "method": "ping"},
         _('"jsonrpc" is the number 2.0, not the string', '"jsonrpc" es el número 2.0, no la '
           "cadena")),
        ({"jsonrpc": "2.0", "id": 1, "method": 42}, _('"method" is not a string',
                                                      '"method" no es una cadena')),
        ({"jsonrpc": "2.0", "id": 1, "method": ""}, _('"method" is empty', '"method" está vacío')),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"},
         _("id true: a boolean is not an id", "id true: un booleano no es un id")),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"},
         _("a request with id null", "una solicitud con id null")),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
         _("a fractional id", "un id con decimales")),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1, 2]},
         _("params as an array (MCP uses named params)",
           "params como array (MCP usa parámetros con nombre)")),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}},
         _("both result and error", "result y error a la vez")),
        ({"jsonrpc": "2.0", "id": 1}, _("neither method, result nor error",
                                        "ni method, ni result, ni error")),
        ({"jsonrpc": "2.0", "result": {}}, _("a response without id", "una respuesta sin id")),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "oops", "message": "x"}},
         _("an error whose code is not an integer", "un error cuyo code no es un entero")),
    ]
    results = [
        case(name, _kind_or_error(classify, msg), kind, given=json.dumps(msg),
             hint=_("check 'id' in message, not message.get('id'): 0 is falsy",
                    "comprueba 'id' in message, no message.get('id'): 0 es falso en Python")
             if msg.get("id") == 0 else None)
        for (msg, kind), name in zip(good, names_good, strict=True)
    ]
    results += [
        case(_("invalid: ", "inválido: ") + name, _kind_or_error(classify, msg),
             Err("InvalidRequest"), given=json.dumps(msg),
             hint=_("raise InvalidRequest(reason)", "lanza InvalidRequest(motivo)"))
        for msg, name in bad
    ]
    run_checks(results)


def _error_shape(response: Any) -> Any:
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


def check_error_for(error_for: Callable) -> None:
    """Lab 02, part 2: from one raw line to the error response it deserves (or None)."""

    def expect(id_: Any, code: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": "…"}}

    rows = [
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', None,
         _("a valid request needs no error", "una solicitud válida no necesita error")),
        (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', None,
         _("a valid notification needs no error", "una notificación válida no necesita error")),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"', expect(None, -32700),
         _("truncated JSON: parse error, id null", "JSON truncado: error de análisis, id null")),
        (b'\xff\xfe', expect(None, -32700),
         _("bytes that are not UTF-8: parse error", "bytes que no son UTF-8: error de análisis")),
        (b'{"jsonrpc":"1.0","id":7,"method":"ping"}', expect(7, -32600),
         _("readable but invalid: -32600 with the message's own id",
           "legible pero inválido: -32600 con el id del propio mensaje")),
        (b'{"jsonrpc":"2.0","id":"a-1","method":5}', expect("a-1", -32600),
         _("a string id is echoed back as is", "un id de texto se devuelve tal cual")),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', expect(None, -32600),
         _("an unusable id (true) is answered with id null",
           "un id inservible (true) se responde con id null")),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', expect(None, -32600),
         _("a batch: -32600 with id null", "un lote: -32600 con id null")),
        (b'{"jsonrpc":"2.0","id":0,"params":{}}', expect(0, -32600),
         _("no method, result or error: -32600 keeping id 0",
           "sin method, result ni error: -32600 conservando el id 0")),
        (b'{"jsonrpc":"2.0","method":"notifications/x","params":"oops"}', expect(None, -32600),
         _("an invalid notification still gets an error, with id null",
           "una notificación inválida también recibe un error, con id null")),
    ]
    results = [
        case(name, lambda raw=raw: error_for(raw), expected, given=repr(raw),
             normalize=_error_shape,
             hint=_("parse problems are -32700 with id null; shape problems -32600",
                    "los problemas de análisis son -32700 con id null; los de forma, -32600"))
        for raw, expected, name in rows
    ]
    run_checks(results)


def check_call_tool(call_tool: Callable) -> None:
    """Lab 02, part 3: the two kinds of error of a tools/call."""

    def divide(a: float, b: float) -> str:
        return str(a / b)

    def shout(text: str) -> str:
        return text.upper() + "!"

    tools = {"divide": divide, "shout": shout}

    def error_text(tool: Callable, **arguments: Any) -> str:
        """What str(exception) says on this Python, so the checks don't pin its wording."""
        try:
            tool(**arguments)
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        raise AssertionError("the sample tool was expected to fail")

    def req(params: Any, id_: Any = 1) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": "tools/call"}
        if params is not None:
            message["params"] = params
        return message

    def ok(id_: Any, text: str, is_error: bool = False) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_,
                "result": {"content": [{"type": "text", "text": text}], "isError": is_error}}

    def protocol_error(id_: Any, code: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": "…"}}

    def shape(response: Any) -> Any:
        if isinstance(response, dict) and isinstance(response.get("result"), dict):
            result = dict(response["result"])
            result.setdefault("isError", False)
            return {**response, "result": result}
        return _error_shape(response)

    rows = [
        (req({"name": "shout", "arguments": {"text": "hola"}}), ok(1, "HOLA!"),
         _("a tool that works: a result with one text block",
           "una herramienta que funciona: un resultado con un bloque de texto"), None),
        (req({"name": "divide", "arguments": {"a": 1, "b": 4}}, id_="r-2"), ok("r-2", "0.25"),
         _("the response carries the request's id", "la respuesta lleva el id de la solicitud"),
         None),
        (req({"name": "divide", "arguments": {"a": 1, "b": 0}}),
         ok(1, error_text(divide, a=1, b=0), is_error=True),
         _("a tool that fails: a result with isError true and the error text",
           "una herramienta que falla: un resultado con isError true y el texto del error"),
         _("the tool ran and failed: that is a result the model should see, not a protocol "
           "error", "la herramienta se ejecutó y falló: es un resultado que el modelo debe "
           "ver, no un error de protocolo")),
        (req({"name": "divide", "arguments": {"a": 1}}),
         ok(1, error_text(divide, a=1), is_error=True),
         _("missing arguments: the tool cannot run, still a tool error (isError)",
           "faltan argumentos: la herramienta no puede ejecutarse, sigue siendo un error de "
           "herramienta (isError)"),
         _('the text is f"{type(exc).__name__}: {exc}"',
           'el texto es f"{type(exc).__name__}: {exc}"')),
        (req({"name": "shout"}), ok(1, error_text(shout), is_error=True),
         _("no arguments at all count as {}", "la ausencia de arguments equivale a {}"), None),
        (req({"name": "launch_rockets", "arguments": {}}), protocol_error(1, -32602),
         _("an unknown tool: a protocol error, -32602",
           "una herramienta desconocida: un error de protocolo, -32602"),
         _("nothing ran: answer with a JSON-RPC error object",
           "no se ejecutó nada: responde con un objeto de error JSON-RPC")),
        (req({"arguments": {}}, id_=9), protocol_error(9, -32602),
         _("no tool name: a protocol error, -32602",
           "sin nombre de herramienta: un error de protocolo, -32602"), None),
        (req(None, id_=10), protocol_error(10, -32602),
         _("no params at all: a protocol error, -32602",
           "sin params: un error de protocolo, -32602"), None),
        (req({"name": "shout", "arguments": ["hola"]}), protocol_error(1, -32602),
         _("arguments that are not an object: a protocol error, -32602",
           "arguments que no son un objeto: un error de protocolo, -32602"), None),
    ]
    results = [
        case(name, lambda r=request: call_tool(r, tools), expected, given=json.dumps(request),
             normalize=shape, hint=hint)
        for request, expected, name, hint in rows
    ]
    run_checks(results)


# --------------------------------------------------------------------------- lab 03: dispatch


def check_dispatcher(cls: type) -> None:
    """Lab 03: a dispatcher that follows the three rules of lesson 03."""

    def build() -> tuple[Any, list[Any], list[Any]]:
        seen: list[Any] = []
        responses: list[Any] = []
        d = cls(on_response=responses.append)

        def add(params: dict, context: Any) -> dict:
            return {"sum": params["a"] + params["b"]}

        def boom(params: dict, context: Any) -> dict:
            raise RuntimeError("secret path /home/ana/notes.db is locked")

        def strict(params: dict, context: Any) -> dict:
            from .jsonrpc import InvalidParams

            if "name" not in params:
                raise InvalidParams("name is required")
            return {"hello": params["name"]}

        def teapot(params: dict, context: Any) -> dict:
            from .jsonrpc import JsonRpcError

            raise JsonRpcError(-32002, "Resource not found", {"uri": "notes://9"})

        def echo_context(params: dict, context: Any) -> dict:
            return {"params": params, "context": context}

        def remember(params: dict, context: Any) -> str:
            seen.append(params)
            return "ignored"

        def crash(params: dict, context: Any) -> None:
            seen.append("crash")
            raise RuntimeError("notification handler crashed")

        for method, handler in [("add", add), ("boom", boom), ("greet", strict),
                                ("resources/read", teapot), ("echo", echo_context)]:
            d.add_request(method, handler)
        d.add_notification("notifications/progress", remember)
        d.add_notification("notifications/cancelled", crash)
        return d, seen, responses

    def run(message: Any, context: Any = None) -> Callable[[], Any]:
        def go() -> Any:
            d, _seen, _responses = build()
            return d.dispatch(message, context)

        return go

    def result(id_: Any, value: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "result": value}

    def error(id_: Any, code: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": "…"}}

    def req(id_: Any, method: str, params: Any = None) -> dict[str, Any]:
        m: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            m["params"] = params
        return m

    def note(method: str, params: Any = None) -> dict[str, Any]:
        m: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            m["params"] = params
        return m

    def notification_effects(message: Any) -> Callable[[], Any]:
        def go() -> Any:
            d, seen, _responses = build()
            return {"returned": d.dispatch(message), "handler saw": seen}

        return go

    def response_routing() -> Any:
        d, _seen, responses = build()
        message = {"jsonrpc": "2.0", "id": 41, "result": {"ok": True}}
        return {"returned": d.dispatch(message), "on_response got": responses}

    def leaks() -> Any:
        d, _seen, _responses = build()
        response = d.dispatch(req(5, "boom"))
        text = json.dumps(response)
        return {"code": response["error"]["code"], "leaks the exception text":
                "secret" in text or "RuntimeError" in text}

    results = [
        case(_("a request gets the handler's result", "una solicitud recibe el resultado del "
               "manejador"), run(req(1, "add", {"a": 2, "b": 3})), result(1, {"sum": 5}),
             given=json.dumps(req(1, "add", {"a": 2, "b": 3}))),
        case(_("id 0 is a request like any other", "el id 0 es una solicitud como cualquier "
               "otra"), run(req(0, "add", {"a": 1, "b": 1})), result(0, {"sum": 2}),
             given=json.dumps(req(0, "add", {"a": 1, "b": 1})),
             hint=_("test 'id' in message: 0 is falsy", "comprueba 'id' in message: 0 es falso "
                    "en Python")),
        case(_("handlers get (params, context)", "los manejadores reciben (params, context)"),
             run(req("x", "echo", {"k": 1}), context="ctx"),
             result("x", {"params": {"k": 1}, "context": "ctx"}),
             given="dispatch(" + json.dumps(req("x", "echo", {"k": 1})) + ", context='ctx')"),
        case(_("missing params reach the handler as {}", "params ausentes llegan al manejador "
               "como {}"), run(req(2, "echo")), result(2, {"params": {}, "context": None}),
             given=json.dumps(req(2, "echo"))),
        case(_("an unknown method: -32601", "un método desconocido: -32601"),
             run(req(3, "tools/destroy")), error(3, -32601), normalize=_error_shape,
             given=json.dumps(req(3, "tools/destroy"))),
        case(_("InvalidParams from a handler: -32602", "InvalidParams desde un manejador: "
               "-32602"), run(req(4, "greet", {})), error(4, -32602), normalize=_error_shape,
             given=json.dumps(req(4, "greet", {}))),
        case(_("any JsonRpcError keeps its own code", "cualquier JsonRpcError conserva su "
               "propio código"), run(req(6, "resources/read")), error(6, -32002),
             normalize=_error_shape, given=json.dumps(req(6, "resources/read"))),
        case(_("a handler that crashes: -32603, without leaking the exception text",
               "un manejador que falla: -32603, sin filtrar el texto de la excepción"),
             leaks, {"code": -32603, "leaks the exception text": False},
             given=json.dumps(req(5, "boom")),
             hint=_("log the traceback locally; send a short generic message",
                    "registra la traza localmente; envía un mensaje genérico y breve")),
        case(_("a notification is never answered", "una notificación nunca se responde"),
             notification_effects(note("notifications/progress", {"progress": 1})),
             {"returned": None, "handler saw": [{"progress": 1}]},
             given=json.dumps(note("notifications/progress", {"progress": 1}))),
        case(_("not even when its handler crashes", "ni siquiera cuando su manejador falla"),
             notification_effects(note("notifications/cancelled")),
             {"returned": None, "handler saw": ["crash"]},
             given=json.dumps(note("notifications/cancelled"))),
        case(_("nor when nobody handles it", "ni cuando nadie la maneja"),
             notification_effects(note("notifications/unknown")),
             {"returned": None, "handler saw": []},
             given=json.dumps(note("notifications/unknown"))),
        case(_("an invalid message: -32600 with its id", "un mensaje inválido: -32600 con su id"),
             run({"jsonrpc": "1.0", "id": 8, "method": "add"}), error(8, -32600),
             normalize=_error_shape, given='{"jsonrpc": "1.0", "id": 8, "method": "add"}'),
        case(_("an invalid message without a usable id: -32600 with id null",
               "un mensaje inválido sin id utilizable: -32600 con id null"),
             run(["not", "a", "message"]), error(None, -32600), normalize=_error_shape,
             given='["not", "a", "message"]'),
        case(_("a response goes to on_response, and nothing is sent back",
               "una respuesta va a on_response y no se envía nada de vuelta"),
             response_routing,
             {"returned": None, "on_response got": [{"jsonrpc": "2.0", "id": 41,
                                                     "result": {"ok": True}}]},
             given='{"jsonrpc": "2.0", "id": 41, "result": {"ok": true}}'),
    ]
    run_checks(results)


def check_serve(serve: Callable) -> None:
    """Lab 03, part 2: bytes in, bytes out, through mcpkit's own decoder and dispatcher."""
    from .dispatch import Dispatcher

    def make() -> Any:
        d = Dispatcher()
        d.add_request("ping", lambda params, context: {})
        d.add_request("echo", lambda params, context: {"echo": params.get("text")})
        d.add_notification("notifications/initialized", lambda params, context: None)
        return d

    def lines(out: Any) -> Any:
        """The responses in ``out``, decoded, with error messages masked."""
        if not isinstance(out, bytes | bytearray):
            return out
        decoded = []
        for line in bytes(out).split(b"\n")[:-1]:
            try:
                decoded.append(_error_shape(json.loads(line)))
            except ValueError:
                decoded.append(line)
        if out and not out.endswith(b"\n"):
            decoded.append(_("<bytes after the last newline>", "<bytes tras el último salto>"))
        return decoded

    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    echo = '{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"¡hola!"}}\n'.encode()
    init = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    pong = {"jsonrpc": "2.0", "id": 1, "result": {}}
    echoed = {"jsonrpc": "2.0", "id": 2, "result": {"echo": "¡hola!"}}

    def error(id_: Any, code: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": "…"}}

    rows = [
        ([ping], [pong], _("one request, one response line", "una solicitud, una línea de "
                           "respuesta")),
        ([ping + echo], [pong, echoed], _("two requests in one chunk, answered in order",
                                          "dos solicitudes en un trozo, respondidas en orden")),
        ([echo[:30], echo[30:]], [echoed], _("a request split across chunks (and UTF-8 inside)",
                                             "una solicitud partida entre trozos (con UTF-8)")),
        ([init + ping], [pong], _("a notification produces no output",
                                  "una notificación no produce salida")),
        ([b"{not json}\n" + ping], [error(None, -32700), pong],
         _("a line that is not JSON: a parse error (-32700, id null), then carry on",
           "una línea que no es JSON: error de análisis (-32700, id null) y seguir")),
        ([b'{"jsonrpc":"2.0","id":3,"method":"nope"}\n'], [error(3, -32601)],
         _("an unknown method: the dispatcher's -32601 goes out",
           "un método desconocido: sale el -32601 del despachador")),
        ([b'{"jsonrpc":"2.0","id":4}\n'], [error(4, -32600)],
         _("an invalid message: the dispatcher's -32600 goes out",
           "un mensaje inválido: sale el -32600 del despachador")),
        ([ping[:5]], [], _("an unfinished message produces nothing yet",
                           "un mensaje inacabado todavía no produce nada")),
    ]
    results = [
        case(name, lambda chunks=chunks: serve(make(), chunks), expected,
             given=" + ".join(repr(c) for c in chunks), normalize=lines,
             hint=_("one encode_ndjson(response) per response, nothing for None",
                    "un encode_ndjson(respuesta) por respuesta, nada para None"))
        for chunks, expected, name in rows
    ]
    run_checks(results)


# --------------------------------------------------------------------------- lab 04: server

#: The notes every lab 04 check starts from (a fresh copy per case): id -> title and body.
NOTES_SEED: dict[str, dict[str, str]] = {
    "1": {"title": "Shopping", "body": "Milk, eggs, coffee."},
    "2": {"title": "MCP", "body": "Hosts run clients; each client talks to one server."},
    "3": {"title": "Café", "body": "Order beans from the café on Friday."},
}
_CHECK_REVISION = "2025-11-25"


def _seed(notes: dict[str, dict[str, str]] | None = None) -> dict[str, dict[str, str]]:
    return {k: dict(v) for k, v in (NOTES_SEED if notes is None else notes).items()}


class _Client:
    """A client in this process: drives a learner's Server through ``server.connect(send)``.

    It sends real JSON-RPC messages to the connection and keeps every message the server
    sends back, in order. Most tools answer before ``receive`` returns; a tool that runs on
    its own thread (one with a Context parameter) is waited for.
    """

    def __init__(self, server: Any, version: str = _CHECK_REVISION) -> None:
        self.inbox: list[dict[str, Any]] = []
        self._seen = 0
        self._cond = threading.Condition()
        self.connection = server.connect(self._deliver)
        self._next_id = 0
        self.init = self.request("initialize", {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "mcpkit-grading", "version": "1.0"}})
        self.connection.receive({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.drain()

    def _deliver(self, message: dict[str, Any]) -> None:
        with self._cond:
            self.inbox.append(json.loads(json.dumps(message)))  # what the wire would carry
            self._cond.notify_all()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        request_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.connection.receive(message)

        def answered() -> dict[str, Any] | None:
            return next((m for m in self.inbox if m.get("id") == request_id
                         and "method" not in m), None)

        with self._cond:
            self._cond.wait_for(lambda: answered() is not None, timeout=3.0)
            response = answered()
        if response is None:
            raise TimeoutError(f"no response to {method} within 3 s")
        return response

    def call(self, name: str, arguments: Any) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def drain(self) -> list[dict[str, Any]]:
        """The messages that arrived since the last drain."""
        with self._cond:
            new = self.inbox[self._seen:]
            self._seen = len(self.inbox)
        return new

    def close(self) -> None:
        self.connection.close()


def _tool_value(result: dict[str, Any]) -> Any:
    """What a tool returned, read back from its result (structured or as JSON text)."""
    if "structuredContent" in result:
        value = result["structuredContent"]
        if isinstance(value, dict) and list(value) == ["result"]:
            return value["result"]
        return value
    content = result.get("content") or []
    texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    if len(texts) != 1:
        return content
    try:
        return json.loads(texts[0])
    except (TypeError, ValueError):
        return texts[0]


def _outcome(response: dict[str, Any]) -> dict[str, Any]:
    """A response as the lab checks it: a protocol error's code, or a tool result."""
    if "error" in response:
        return {"protocol error": response["error"].get("code")}
    result = response.get("result")
    if not isinstance(result, dict):
        return {"result": result}
    if result.get("isError") is True:
        return {"isError": True}
    return {"isError": False, "value": _tool_value(result)}


def _tool_server(add_tools: Callable, notes: dict[str, dict[str, str]] | None = None):
    """A fresh Server with the learner's tools, its notes, and the URIs it said changed."""
    from .server import Server

    server = Server("notes-check", "1.0.0")
    changed: list[str] = []
    notify = server.notify_resource_updated

    def recorded(uri: str) -> None:
        changed.append(uri)
        notify(uri)

    server.notify_resource_updated = recorded  # type: ignore[method-assign]
    store = _seed(notes)
    add_tools(server, store)
    return server, store, changed


def _schema_shape(schema: Any) -> Any:
    """An inputSchema reduced to what lab 04 asks for: each property's type, and required."""
    if not isinstance(schema, dict):
        return schema
    properties = schema.get("properties") or {}
    return {"properties": {name: (prop.get("type") if isinstance(prop, dict) else prop)
                           for name, prop in properties.items()},
            "required": sorted(schema.get("required") or [])}


def check_note_tools(add_tools: Callable) -> None:
    """Lab 04, part 1: the four note tools, their schemas, annotations, results and errors."""

    def tools_list() -> dict[str, Any]:
        server, _store, _changed = _tool_server(add_tools)
        client = _Client(server)
        tools = client.request("tools/list")["result"]["tools"]
        client.close()
        return {t["name"]: t for t in tools}

    def definition_of(name: str, part: Callable[[dict[str, Any]], Any]) -> Callable[[], Any]:
        def run() -> Any:
            tools = tools_list()
            if name not in tools:
                return _("(no tool called {name})", "(no hay ninguna herramienta {name})").format(
                    name=name)
            return part(tools[name])

        return run

    def schema(tool: dict[str, Any]) -> Any:
        return _schema_shape(tool.get("inputSchema"))

    def hints(tool: dict[str, Any]) -> dict[str, Any]:
        annotations = tool.get("annotations") or {}
        return {"readOnlyHint": annotations.get("readOnlyHint") is True,
                "destructiveHint": annotations.get("destructiveHint")}

    def read_only(tool: dict[str, Any]) -> Any:
        return (tool.get("annotations") or {}).get("readOnlyHint")

    def session(steps: Callable[[_Client, dict, list], Any],
                notes: dict[str, dict[str, str]] | None = None) -> Callable[[], Any]:
        def run() -> Any:
            server, store, changed = _tool_server(add_tools, notes)
            client = _Client(server)
            try:
                return steps(client, store, changed)
            finally:
                client.close()

        return run

    def call(name: str, arguments: Any, notes: dict[str, dict[str, str]] | None = None):
        return session(lambda c, s, ch: _outcome(c.call(name, arguments)), notes)

    def ok(value: Any) -> dict[str, Any]:
        return {"isError": False, "value": value}

    tool_error = {"isError": True}
    many = {str(i): {"title": f"Note {i}", "body": "same words"} for i in range(1, 13)}
    seed_list = [{"id": k, "title": v["title"]} for k, v in NOTES_SEED.items()]

    def full(note_id: str) -> dict[str, str]:
        return {"id": note_id, **NOTES_SEED[note_id]}

    def create_then(c: _Client, store: dict, changed: list) -> Any:
        created = _outcome(c.call("notes_create", {"title": "Tea", "body": "Green, no sugar."}))
        return {"result": created, "notes_list": _outcome(c.call("notes_list", {})),
                "notes['4']": store.get("4"), "notified": changed}

    def delete_then(c: _Client, store: dict, changed: list) -> Any:
        deleted = _outcome(c.call("notes_delete", {"id": "2"}))
        deleted.pop("value", None)
        listed = _outcome(c.call("notes_list", {}))
        return {"result": deleted, "ids left": [n.get("id") for n in listed.get("value") or []],
                "notified": changed}

    def delete_twice(c: _Client, store: dict, changed: list) -> Any:
        first = _outcome(c.call("notes_delete", {"id": "1"}))
        second = _outcome(c.call("notes_delete", {"id": "1"}))
        return {"first isError": first.get("isError"), "second": second, "notified": changed}

    def unknown_delete(c: _Client, store: dict, changed: list) -> Any:
        return {"result": _outcome(c.call("notes_delete", {"id": "99"})),
                "notes left": sorted(store), "notified": changed}

    def integer_id(c: _Client, store: dict, changed: list) -> Any:
        return {"result": _outcome(c.call("notes_delete", {"id": 1})),
                "notes left": sorted(store)}

    def no_reuse(c: _Client, store: dict, changed: list) -> Any:
        c.call("notes_delete", {"id": "3"})
        first = _tool_value(c.call("notes_create", {"title": "A", "body": "a"})["result"])
        c.call("notes_delete", {"id": "4"})
        second = _tool_value(c.call("notes_create", {"title": "B", "body": "b"})["result"])
        return {"created": [n.get("id") if isinstance(n, dict) else n for n in (first, second)],
                "notes": sorted(store)}

    def blank_title(c: _Client, store: dict, changed: list) -> Any:
        return {"result": _outcome(c.call("notes_create", {"title": "   ", "body": "x"})),
                "notes": sorted(store), "notified": changed}

    results = [
        case(_("the four tools are listed", "se listan las cuatro herramientas"),
             lambda: sorted(tools_list()),
             ["notes_create", "notes_delete", "notes_list", "notes_search"],
             given="tools/list"),
        case(_("notes_list takes no arguments", "notes_list no recibe argumentos"),
             definition_of("notes_list", schema), {"properties": {}, "required": []},
             given="tools/list"),
        case(_("notes_search: query (string, required), limit (integer, optional)",
               "notes_search: query (cadena, obligatoria), limit (entero, opcional)"),
             definition_of("notes_search", schema),
             {"properties": {"query": "string", "limit": "integer"}, "required": ["query"]},
             given="tools/list", hint=_("def notes_search(query: str, limit: int = 10)",
                                        "def notes_search(query: str, limit: int = 10)")),
        case(_("notes_create: title and body (strings, required)",
               "notes_create: title y body (cadenas, obligatorias)"),
             definition_of("notes_create", schema),
             {"properties": {"title": "string", "body": "string"}, "required": ["body", "title"]},
             given="tools/list"),
        case(_("notes_delete: id is a string (ids are strings)",
               "notes_delete: id es una cadena (los ids son cadenas)"),
             definition_of("notes_delete", schema),
             {"properties": {"id": "string"}, "required": ["id"]}, given="tools/list",
             hint=_("def notes_delete(id: str): ids are strings like \"2\"",
                    "def notes_delete(id: str): los ids son cadenas como \"2\"")),
        case(_("notes_list is read-only (readOnlyHint true)",
               "notes_list es de solo lectura (readOnlyHint true)"),
             definition_of("notes_list", read_only), True, given="tools/list",
             hint="@server.tool(read_only=True)"),
        case(_("notes_search is read-only (readOnlyHint true)",
               "notes_search es de solo lectura (readOnlyHint true)"),
             definition_of("notes_search", read_only), True, given="tools/list",
             hint="@server.tool(read_only=True)"),
        case(_("notes_create only adds (destructiveHint false)",
               "notes_create solo añade (destructiveHint false)"),
             definition_of("notes_create", hints),
             {"readOnlyHint": False, "destructiveHint": False}, given="tools/list",
             hint=_("the default is destructive: say destructive=False",
                    "por defecto se supone destructiva: indica destructive=False")),
        case(_("notes_delete says it is destructive (destructiveHint true)",
               "notes_delete dice que es destructiva (destructiveHint true)"),
             definition_of("notes_delete", hints),
             {"readOnlyHint": False, "destructiveHint": True}, given="tools/list",
             hint=_("@server.tool(destructive=True): say it explicitly, so that a host asks "
                    "the user before it runs", "@server.tool(destructive=True): dilo "
                    "explícitamente, para que un host pregunte al usuario antes de ejecutarla")),
        case(_("notes_list: every note's id and title, in order",
               "notes_list: el id y el título de cada nota, en orden"),
             call("notes_list", {}), ok(seed_list), given='notes_list {}'),
        case(_("notes_search finds a title whatever its case",
               "notes_search encuentra un título sin importar mayúsculas"),
             call("notes_search", {"query": "mcp"}), ok([full("2")]),
             given='notes_search {"query": "mcp"}',
             hint=_("compare query.lower() with title.lower() and body.lower()",
                    "compara query.lower() con title.lower() y body.lower()")),
        case(_("notes_search looks in the body too, case-insensitively",
               "notes_search busca también en el cuerpo, sin distinguir mayúsculas"),
             call("notes_search", {"query": "EGGS"}), ok([full("1")]),
             given='notes_search {"query": "EGGS"}'),
        case(_("notes_search: accented capitals match too",
               "notes_search: también encajan las mayúsculas con tilde"),
             call("notes_search", {"query": "CAFÉ"}), ok([full("3")]),
             given='notes_search {"query": "CAFÉ"}'),
        case(_("notes_search: several matches, in the notes' order",
               "notes_search: varias coincidencias, en el orden de las notas"),
             call("notes_search", {"query": "o"}), ok([full("1"), full("2"), full("3")]),
             given='notes_search {"query": "o"}'),
        case(_("notes_search: limit caps the number of results",
               "notes_search: limit acota el número de resultados"),
             call("notes_search", {"query": "o", "limit": 2}), ok([full("1"), full("2")]),
             given='notes_search {"query": "o", "limit": 2}'),
        case(_("notes_search: at most 10 results by default",
               "notes_search: como mucho 10 resultados por defecto"),
             call("notes_search", {"query": "same"}, many),
             ok([{"id": str(i), "title": f"Note {i}", "body": "same words"}
                 for i in range(1, 11)]),
             given=_('12 notes that all match; notes_search {"query": "same"}',
                     '12 notas que coinciden todas; notes_search {"query": "same"}')),
        case(_("notes_search: no match is an empty list, not an error",
               "notes_search: sin coincidencias es una lista vacía, no un error"),
             call("notes_search", {"query": "zebra"}), ok([]),
             given='notes_search {"query": "zebra"}'),
        case(_("notes_create returns the new note, stores it in notes and notifies notes://4",
               "notes_create devuelve la nota nueva, la guarda en notes y avisa de notes://4"),
             session(create_then),
             {"result": ok({"id": "4", "title": "Tea", "body": "Green, no sugar."}),
              "notes_list": ok(seed_list + [{"id": "4", "title": "Tea"}]),
              "notes['4']": {"title": "Tea", "body": "Green, no sugar."},
              "notified": ["notes://4"]},
             given='notes_create {"title": "Tea", "body": "Green, no sugar."}; notes_list {}',
             hint=_('call server.notify_resource_updated(f"notes://{note_id}") after the '
                    "change", 'llama a server.notify_resource_updated(f"notes://{note_id}") '
                    "tras el cambio")),
        case(_("ids are never reused, even after deleting the newest note",
               "los ids nunca se reutilizan, ni siquiera tras borrar la nota más nueva"),
             session(no_reuse), {"created": ["4", "5"], "notes": ["1", "2", "5"]},
             given=_("delete 3, create, delete 4, create", "borrar 3, crear, borrar 4, crear"),
             hint=_("keep a counter (itertools.count) that starts after the largest seed id",
                    "usa un contador (itertools.count) que empiece tras el mayor id inicial")),
        case(_("notes_create with a blank title: isError, nothing stored, nothing notified",
               "notes_create con un título en blanco: isError, no se guarda ni se avisa nada"),
             session(blank_title),
             {"result": tool_error, "notes": ["1", "2", "3"], "notified": []},
             given='notes_create {"title": "   ", "body": "x"}',
             hint=_("raise ValueError(...) when title.strip() is empty",
                    "lanza ValueError(...) cuando title.strip() está vacío")),
        case(_("notes_delete removes the note and notifies its URI",
               "notes_delete elimina la nota y avisa de su URI"),
             session(delete_then),
             {"result": {"isError": False}, "ids left": ["1", "3"], "notified": ["notes://2"]},
             given='notes_delete {"id": "2"}; notes_list {}'),
        case(_("notes_delete of an unknown id: an isError result, not a crash",
               "notes_delete de un id desconocido: un resultado isError, no un fallo"),
             session(unknown_delete),
             {"result": tool_error, "notes left": ["1", "2", "3"], "notified": []},
             given='notes_delete {"id": "99"}',
             hint=_("raise KeyError or ValueError: mcpkit turns it into isError for the model",
                    "lanza KeyError o ValueError: mcpkit lo convierte en isError para el "
                    "modelo")),
        case(_("deleting twice: the second call is an isError result",
               "borrar dos veces: la segunda llamada es un resultado isError"),
             session(delete_twice),
             {"first isError": False, "second": tool_error, "notified": ["notes://1"]},
             given='notes_delete {"id": "1"} ×2',
             hint=_("notify only after a deletion that happened",
                    "avisa solo tras un borrado que se produjo")),
        case(_("an id sent as a number is refused by the schema (isError), nothing deleted",
               "un id enviado como número lo rechaza el esquema (isError), no se borra nada"),
             session(integer_id), {"result": tool_error, "notes left": ["1", "2", "3"]},
             given='notes_delete {"id": 1}'),
        case(_("a tool that does not exist: protocol error -32602",
               "una herramienta que no existe: error de protocolo -32602"),
             call("notes_purge", {}), {"protocol error": -32602},
             given='notes_purge {}'),
    ]
    run_checks(results)


def _resource_server(add_resources: Callable, notes: dict[str, dict[str, str]] | None = None):
    from .server import Server

    server = Server("notes-check", "1.0.0")
    store = _seed(notes)
    add_resources(server, store)
    return server, store


def _error_code(response: dict[str, Any]) -> Any:
    if "error" in response:
        return {"protocol error": response["error"].get("code")}
    return {"result": response.get("result")}


def check_note_resources(add_resources: Callable) -> None:
    """Lab 04, part 2: the ``notes://{id}`` template and the ``review_note`` prompt."""

    def session(steps: Callable[[_Client, dict], Any]) -> Callable[[], Any]:
        def run() -> Any:
            server, store = _resource_server(add_resources)
            client = _Client(server)
            try:
                return steps(client, store)
            finally:
                client.close()

        return run

    def markdown(note_id: str) -> str:
        note = NOTES_SEED[note_id]
        return f"# {note['title']}\n\n{note['body']}\n"

    def contents(note_id: str, text: str) -> dict[str, Any]:
        return {"result": {"contents": [{"uri": f"notes://{note_id}",
                                         "mimeType": "text/markdown", "text": text}]}}

    def read(uri: str) -> Callable[[], Any]:
        return session(lambda c, s: _error_code(c.request("resources/read", {"uri": uri})))

    def templates(c: _Client, store: dict) -> Any:
        found = c.request("resources/templates/list")["result"]["resourceTemplates"]
        return [{k: t.get(k) for k in ("uriTemplate", "mimeType")} for t in found]

    def live(c: _Client, store: dict) -> Any:
        store["7"] = {"title": "Later", "body": "Added after start-up."}
        return _error_code(c.request("resources/read", {"uri": "notes://7"}))

    def gone(c: _Client, store: dict) -> Any:
        del store["1"]
        return _error_code(c.request("resources/read", {"uri": "notes://1"}))

    def prompts(c: _Client, store: dict) -> Any:
        found = c.request("prompts/list")["result"]["prompts"]
        return [{"name": p.get("name"),
                 "arguments": [{"name": a.get("name"), "required": a.get("required")}
                               for a in p.get("arguments") or []]} for p in found]

    def review(note_id: str) -> Callable[[], Any]:
        def steps(c: _Client, store: dict) -> Any:
            response = c.request("prompts/get", {"name": "review_note",
                                                 "arguments": {"id": note_id}})
            if "error" in response:
                return _error_code(response)
            messages = response["result"].get("messages")
            if not isinstance(messages, list) or len(messages) != 2:
                return messages
            first, second = messages
            content = second.get("content") if isinstance(second, dict) else None
            return {"first": first,
                    "second": {"role": second.get("role") if isinstance(second, dict) else None,
                               "content type": content.get("type")
                               if isinstance(content, dict) else None}}

        return session(steps)

    def review_expected(note_id: str) -> dict[str, Any]:
        return {"first": {"role": "user", "content": {"type": "resource", "resource": {
                    "uri": f"notes://{note_id}", "mimeType": "text/markdown",
                    "text": markdown(note_id)}}},
                "second": {"role": "user", "content type": "text"}}

    not_found = {"protocol error": -32002}
    results = [
        case(_("one resource template, notes://{id}, in Markdown",
               "una plantilla de recurso, notes://{id}, en Markdown"),
             session(templates), [{"uriTemplate": "notes://{id}", "mimeType": "text/markdown"}],
             given="resources/templates/list",
             hint='@server.resource("notes://{id}", name="note", mime_type="text/markdown")'),
        case(_("reading notes://1 gives the note as Markdown",
               "leer notes://1 da la nota en Markdown"),
             read("notes://1"), contents("1", markdown("1")),
             given='resources/read {"uri": "notes://1"}',
             hint=_('f"# {title}\\n\\n{body}\\n"', 'f"# {title}\\n\\n{body}\\n"')),
        case(_("accents survive the trip", "las tildes sobreviven al viaje"),
             read("notes://3"), contents("3", markdown("3")),
             given='resources/read {"uri": "notes://3"}'),
        case(_("an unknown note: resource not found, -32002",
               "una nota desconocida: recurso no encontrado, -32002"),
             read("notes://99"), not_found, given='resources/read {"uri": "notes://99"}',
             hint=_("let the KeyError of notes[id] propagate: mcpkit answers -32002",
                    "deja que se propague el KeyError de notes[id]: mcpkit responde -32002")),
        case(_("a note added later can be read (read the notes when asked, not at start-up)",
               "una nota añadida después se puede leer (lee las notas al pedirlas, no al "
               "arrancar)"),
             session(live), {"result": {"contents": [{
                 "uri": "notes://7", "mimeType": "text/markdown",
                 "text": "# Later\n\nAdded after start-up.\n"}]}},
             given=_('notes["7"] = {...}; resources/read {"uri": "notes://7"}',
                     'notes["7"] = {...}; resources/read {"uri": "notes://7"}')),
        case(_("a note removed later is not found any more",
               "una nota eliminada después ya no se encuentra"),
             session(gone), not_found,
             given='del notes["1"]; resources/read {"uri": "notes://1"}'),
        case(_("one prompt, review_note, with a required id argument",
               "un prompt, review_note, con un argumento id obligatorio"),
             session(prompts), [{"name": "review_note",
                                 "arguments": [{"name": "id", "required": True}]}],
             given="prompts/list", hint="@server.prompt\ndef review_note(id: str): ..."),
        case(_("review_note: the note as an embedded resource, then a text request",
               "review_note: la nota como recurso incrustado y después un texto que pide "
               "la revisión"),
             review("2"), review_expected("2"),
             given='prompts/get {"name": "review_note", "arguments": {"id": "2"}}'),
        case(_("review_note of an unknown note: protocol error -32602, not a crash",
               "review_note de una nota desconocida: error de protocolo -32602, no un fallo"),
             review("99"), {"protocol error": -32602},
             given='prompts/get {"name": "review_note", "arguments": {"id": "99"}}',
             hint=_("raise InvalidParams(...) when the id is unknown: a KeyError would be "
                    "-32603, an internal error",
                    "lanza InvalidParams(...) cuando el id es desconocido: un KeyError sería "
                    "-32603, un error interno")),
        case(_("review_note without its argument: protocol error -32602",
               "review_note sin su argumento: error de protocolo -32602"),
             session(lambda c, s: _error_code(c.request(
                 "prompts/get", {"name": "review_note", "arguments": {}}))),
             {"protocol error": -32602},
             given='prompts/get {"name": "review_note", "arguments": {}}'),
    ]
    run_checks(results)


def check_notes_server(make_notes_server: Callable) -> None:
    """Lab 04, part 3: the whole notes server in a session: handshake, capabilities and
    resource subscriptions."""

    def session(steps: Callable[..., Any], clients: int = 1) -> Callable[[], Any]:
        def run() -> Any:
            server = make_notes_server(_seed())
            opened = [_Client(server) for _ in range(clients)]
            try:
                return steps(*opened)
            finally:
                for client in opened:
                    client.close()

        return run

    def handshake(c: _Client) -> Any:
        result = c.init.get("result") or {}
        return {"protocolVersion": result.get("protocolVersion"),
                "serverInfo.name": (result.get("serverInfo") or {}).get("name")}

    def capabilities(c: _Client) -> Any:
        caps = (c.init.get("result") or {}).get("capabilities") or {}
        return {"tools": "tools" in caps, "prompts": "prompts" in caps,
                "resources.subscribe": (caps.get("resources") or {}).get("subscribe")}

    def shapes(messages: list[dict[str, Any]]) -> list[Any]:
        shaped: list[Any] = []
        for m in messages:
            if "method" in m:
                shaped.append({"notification": m["method"], "params": m.get("params")})
            elif "error" in m:
                shaped.append({"response": m.get("id"), "error": m["error"].get("code")})
            else:
                shaped.append({"response": m.get("id"),
                               "isError": bool((m.get("result") or {}).get("isError"))})
        return shaped

    def updated(uri: str) -> dict[str, Any]:
        return {"notification": "notifications/resources/updated", "params": {"uri": uri}}

    def response(request_id: int, is_error: bool = False) -> dict[str, Any]:
        return {"response": request_id, "isError": is_error}

    def subscribed_create(c: _Client) -> Any:
        c.request("resources/subscribe", {"uri": "notes://4"})
        c.drain()
        c.call("notes_create", {"title": "Tea", "body": "Green."})
        return shapes(c.drain())

    def subscribed_delete(c: _Client) -> Any:
        c.request("resources/subscribe", {"uri": "notes://1"})
        c.drain()
        c.call("notes_delete", {"id": "1"})
        return shapes(c.drain())

    def other_note(c: _Client) -> Any:
        c.request("resources/subscribe", {"uri": "notes://1"})
        c.drain()
        c.call("notes_delete", {"id": "2"})
        return shapes(c.drain())

    def unsubscribed(c: _Client) -> Any:
        c.request("resources/subscribe", {"uri": "notes://1"})
        c.request("resources/unsubscribe", {"uri": "notes://1"})
        c.drain()
        c.call("notes_delete", {"id": "1"})
        return shapes(c.drain())

    def twice(c: _Client) -> Any:
        c.request("resources/subscribe", {"uri": "notes://3"})
        c.drain()
        c.call("notes_delete", {"id": "3"})
        c.call("notes_delete", {"id": "3"})
        return shapes(c.drain())

    def two_clients(a: _Client, b: _Client) -> Any:
        a.request("resources/subscribe", {"uri": "notes://4"})
        a.drain()
        b.drain()
        b.call("notes_create", {"title": "From b", "body": "Hello."})
        return {"a (subscribed) got": shapes(a.drain()), "b got": shapes(b.drain())}

    def read_after_create(c: _Client) -> Any:
        c.call("notes_create", {"title": "Tea", "body": "Green."})
        found = c.request("resources/read", {"uri": "notes://4"})
        return _error_code(found)

    results = [
        case(_("initialize (2025-11-25): the server answers as notes",
               "initialize (2025-11-25): el servidor responde como notes"),
             session(handshake), {"protocolVersion": "2025-11-25", "serverInfo.name": "notes"},
             given="initialize", hint='Server("notes", "1.0.0")'),
        case(_("capabilities: tools, prompts, and resources with subscribe",
               "capacidades: tools, prompts y resources con subscribe"),
             session(capabilities),
             {"tools": True, "prompts": True, "resources.subscribe": True}, given="initialize",
             hint=_("register the tools and the resources and prompt of parts 1 and 2",
                    "registra las herramientas, el recurso y el prompt de las partes 1 y 2")),
        case(_("tools and resources share the notes: a created note can be read",
               "las herramientas y los recursos comparten las notas: una nota creada se puede "
               "leer"),
             session(read_after_create), {"result": {"contents": [{
                 "uri": "notes://4", "mimeType": "text/markdown", "text": "# Tea\n\nGreen.\n"}]}},
             given='notes_create {"title": "Tea", ...}; resources/read {"uri": "notes://4"}',
             hint=_("pass the same notes dict to add_tools and add_resources",
                    "pasa el mismo dict notes a add_tools y a add_resources")),
        case(_("subscribed to notes://4, a create sends resources/updated, then the response",
               "suscrito a notes://4, crear envía resources/updated y después la respuesta"),
             session(subscribed_create), [updated("notes://4"), response(3)],
             given='resources/subscribe {"uri": "notes://4"}; notes_create {...}'),
        case(_("subscribed to notes://1, deleting it sends resources/updated",
               "suscrito a notes://1, borrarla envía resources/updated"),
             session(subscribed_delete), [updated("notes://1"), response(3)],
             given='resources/subscribe {"uri": "notes://1"}; notes_delete {"id": "1"}'),
        case(_("a change to another note sends nothing to this subscriber",
               "un cambio en otra nota no le envía nada a este suscriptor"),
             session(other_note), [response(3)],
             given='resources/subscribe {"uri": "notes://1"}; notes_delete {"id": "2"}',
             hint=_("notify the URI of the note that changed, not every subscription",
                    "avisa del URI de la nota que cambió, no de todas las suscripciones")),
        case(_("after resources/unsubscribe, nothing more", "tras resources/unsubscribe, nada más"),
             session(unsubscribed), [response(4)],
             given='subscribe notes://1; unsubscribe notes://1; notes_delete {"id": "1"}'),
        case(_("deleting twice: one notification, and the second delete is isError",
               "borrar dos veces: una notificación, y el segundo borrado es isError"),
             session(twice), [updated("notes://3"), response(3), response(4, True)],
             given='subscribe notes://3; notes_delete {"id": "3"} ×2'),
        case(_("only the subscribed client hears of the change, whoever made it",
               "solo el cliente suscrito se entera del cambio, lo haga quien lo haga"),
             session(two_clients, clients=2),
             {"a (subscribed) got": [updated("notes://4")], "b got": [response(2)]},
             given=_("client a subscribes to notes://4; client b creates a note",
                     "el cliente a se suscribe a notes://4; el cliente b crea una nota")),
    ]
    run_checks(results)
