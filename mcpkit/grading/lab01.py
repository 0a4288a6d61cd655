"""Checks for lab 01 (framing): encoders, parse_message, the two incremental decoders."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from .core import (
    CaseResult,
    Err,
    _,
    _short,
    case,
    predicate,
    run_checks,
)


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
