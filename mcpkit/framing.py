"""Message framing: turning a byte stream into JSON messages and back, without doing any I/O.

Two framings are supported:

* ``"ndjson"``: one compact UTF-8 JSON value per line, ended by ``\\n`` (MCP's stdio framing).
* ``"content-length"``: an LSP-style header section (``Content-Length: N``, other headers
  ignored) ended by a blank line, followed by exactly N bytes of UTF-8 JSON.

Theory of operation
-------------------
Like h11, this module never reads or writes anything. A transport owns the socket or pipe and
hands every chunk it receives to a decoder's ``feed()``; it gets back the items that chunk
completed, in stream order. An item is either the parsed JSON value or a ``FramingError``
*instance*: returning errors instead of raising them lets the caller answer one bad message and
carry on with the ones behind it, which may already be sitting in the same chunk.

A decoder keeps only the bytes of the one message it has not finished yet:

* ``NdjsonDecoder._buf`` holds the start of a line whose ``\\n`` has not arrived, so it never
  contains a newline. A new chunk is therefore searched once, from its own first byte, and a
  chunk made of whole lines is split and parsed without touching the buffer at all. If the
  partial line outgrows the size limit, it is reported once and dropped; ``_discarding`` then
  swallows bytes up to the next newline so memory stays bounded by the limit.
* ``ContentLengthDecoder`` is a four-state machine (header, body, skip, resync). In the header
  state the buffer starts at the first header byte and ``_searched`` remembers how much of it is
  known not to contain the blank line, so dribbling a header in byte by byte stays linear. An
  oversized body is skipped by counting bytes (``_remaining``) rather than buffering them. After
  a bad header there is no trustworthy length, so the decoder resyncs by scanning for the next
  ``Content-Length:``.
"""

from __future__ import annotations

import json
import json.encoder
import json.scanner
from collections.abc import Callable

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "FRAMINGS",
    "MAX_HEADER_SIZE",
    "ContentLengthDecoder",
    "FramingError",
    "InvalidHeader",
    "InvalidJson",
    "InvalidUtf8",
    "MessageTooLarge",
    "loads",
    "NdjsonDecoder",
    "UnencodableMessage",
    "decoder_for",
    "encode_content_length",
    "encode_json",
    "encode_ndjson",
    "encoder_for",
]

DEFAULT_MAX_MESSAGE_SIZE: int = 4 * 1024 * 1024
MAX_HEADER_SIZE: int = 8 * 1024
FRAMINGS: tuple[str, ...] = ("ndjson", "content-length")

# Errors keep a preview of the offending bytes, not all of them: an error about a 4 MB body
# should not pin 4 MB of memory for as long as someone holds on to the error.
_RAW_PREVIEW = 200

# One shared encoder/decoder: json.dumps/json.loads with non-default options build a new one
# per call, which is measurable on the hot path. NaN and Infinity are not JSON (RFC 8259), so
# they are refused both ways: the peer's parser may well reject them, and a value we accepted
# would be echoed back (a progress token) where we cannot encode it.
_encode = _encode_checked = json.JSONEncoder(
    separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
if json.encoder.c_make_encoder is not None:  # CPython's C encoder: what encode() builds
    # on every call, built once. No circular check (that needs a fresh table per call): a
    # message that contains itself overflows the stack instead, and encode_ndjson's slow
    # path names the problem.
    def _no_default(value: object) -> object:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    _c_encoder = json.encoder.c_make_encoder(
        None, _no_default, json.encoder.c_encode_basestring, None, ":", ",", False, False,
        False)

    def _encode(message: object) -> str:  # noqa: F811  (the same output, about 2 us sooner)
        return "".join(_c_encoder(message, 0))

# For the rare message holding a lone surrogate ("\ud800" arrives as a JSON escape, and JSON
# can carry it escaped, but UTF-8 cannot carry it raw).
_encode_ascii = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON value (RFC 8259 has no NaN or Infinity)")


_decoder = json.JSONDecoder(parse_constant=_reject_constant)
_decode = _decoder.decode
_scan = json.scanner.c_make_scanner(_decoder) if json.scanner.c_make_scanner else None


def _loads(text: str) -> object:
    """``_decode``, without its two searches for whitespace when there is none around the
    value (the usual message): the C scanner alone, about 1 us sooner."""
    if _scan is None:
        return _decode(text)
    try:
        value, end = _scan(text, 0)
    except StopIteration:  # no value where the text starts: the full decoder says why
        return _decode(text)
    return value if end == len(text) else _decode(text)  # whitespace or more after it


class FramingError(ValueError):
    """A message could not be framed or parsed; ``raw`` holds (a preview of) its bytes."""

    def __init__(self, message: str, raw: bytes | bytearray = b"") -> None:
        super().__init__(message)
        self.raw: bytes = bytes(raw[:_RAW_PREVIEW])


class MessageTooLarge(FramingError):
    """A message exceeded the decoder's ``max_message_size``."""

    def __init__(self, size: int, limit: int, raw: bytes | bytearray = b"") -> None:
        super().__init__(f"message exceeds the size limit ({size} > {limit} bytes)", raw)
        self.size = size
        self.limit = limit


class InvalidUtf8(FramingError):
    """A message's bytes are not valid UTF-8."""


class InvalidJson(FramingError):
    """A message is valid UTF-8 but not parseable JSON."""


class InvalidHeader(FramingError):
    """A Content-Length header section is missing, malformed or too long."""


class UnencodableMessage(ValueError):
    """A message holds a value JSON cannot carry: NaN, Infinity, or an object of no JSON type."""


# --------------------------------------------------------------------------- encoders


def encode_json(message: object) -> bytes:
    """``message`` as compact UTF-8 JSON, or :class:`UnencodableMessage` saying why not."""
    try:
        text = _encode(message)
    except (ValueError, TypeError, RecursionError):
        try:  # again, with the circular check, for the reason in words
            text = _encode_checked(message)
        except (ValueError, TypeError, RecursionError) as exc:
            raise UnencodableMessage(f"cannot be encoded as JSON: {exc}") from None
    try:
        return text.encode()
    except UnicodeEncodeError:
        return _encode_ascii(message).encode()


def encode_ndjson(message: object) -> bytes:
    """Encode ``message`` as one line of compact UTF-8 JSON ending in ``\\n``."""
    # Compact separators never emit a newline, and json escapes the ones inside strings, so
    # the only b"\n" in the output is the terminator.
    try:
        return _encode(message).encode() + b"\n"
    except (ValueError, TypeError, RecursionError):  # the hot path stays one call deep
        return encode_json(message) + b"\n"


def encode_content_length(message: object) -> bytes:
    """Encode ``message`` as a ``Content-Length`` header section followed by the JSON body."""
    body = encode_json(message)
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


def loads(body: bytes | bytearray) -> object:
    """Parse one whole message body (an HTTP POST); raise the :class:`FramingError` it is."""
    value = _parse(body)
    if isinstance(value, FramingError):
        raise value
    return value


# --------------------------------------------------------------------------- helpers


def _check_limit(max_message_size: int) -> None:
    if not isinstance(max_message_size, int) or max_message_size < 1:
        raise ValueError(f"max_message_size must be a positive int, got {max_message_size!r}")


def _utf8_error(exc: UnicodeDecodeError, raw: bytes | bytearray) -> InvalidUtf8:
    return InvalidUtf8(f"message is not valid UTF-8 ({exc.reason} at byte {exc.start})", raw)


def _json_error(exc: Exception, raw: bytes | bytearray) -> InvalidJson:
    # The C scanner recurses per nesting level; a hostile "[[[[..." must not take us down.
    if isinstance(exc, RecursionError):
        return InvalidJson("message is not valid JSON: nested too deeply", raw)
    return InvalidJson(f"message is not valid JSON: {exc}", raw)


def _parse(body: bytes | bytearray) -> object:
    """Parse one complete message body; a FramingError instance is returned, not raised."""
    try:
        text = body.decode()
    except UnicodeDecodeError as exc:
        return _utf8_error(exc, body)
    try:
        return _loads(text)
    except (ValueError, RecursionError) as exc:
        return _json_error(exc, body)


_Bytes = bytes | bytearray | memoryview


# --------------------------------------------------------------------------- NDJSON


class NdjsonDecoder:
    """Incremental decoder for newline-delimited JSON."""

    def __init__(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        _check_limit(max_message_size)
        self.max_message_size = max_message_size
        self._buf = bytearray()
        self._discarding = False

    @property
    def buffered(self) -> int:
        """Bytes of an unfinished line waiting for more data."""
        return len(self._buf)

    def feed(self, data: _Bytes) -> list[object]:
        """Consume ``data``; return every item it completed (values or FramingError instances)."""
        if isinstance(data, memoryview):
            data = data.tobytes()
        out: list[object] = []
        limit = self.max_message_size
        buf = self._buf

        if self._discarding:
            nl = data.find(b"\n")
            if nl < 0:
                return out
            self._discarding = False
            data = data[nl + 1 :]

        if buf:
            # The buffer has no newline (see the module comment), so only new bytes are searched.
            nl = data.find(b"\n")
            if nl < 0:
                if len(buf) + len(data) > limit:
                    out.append(MessageTooLarge(len(buf) + len(data), limit, buf))
                    buf.clear()
                    self._discarding = True
                else:
                    buf += data
                return out
            if len(buf) + nl > limit:
                out.append(MessageTooLarge(len(buf) + nl, limit, buf))
            else:
                buf += memoryview(data)[:nl]
                if not buf.isspace():
                    out.append(_parse(buf))
            buf.clear()
            data = data[nl + 1 :]

        # Fast path: whatever is left starts on a line boundary, so bytes.split does the work.
        lines = data.split(b"\n")
        tail = lines.pop()
        append = out.append
        for line in lines:
            if len(line) > limit:
                append(MessageTooLarge(len(line), limit, line))
                continue
            try:
                text = line.decode()
            except UnicodeDecodeError as exc:
                append(_utf8_error(exc, line))
                continue
            try:
                append(_loads(text))
            except (ValueError, RecursionError) as exc:
                # Blank lines are rare, so they are told apart from bad JSON only after the
                # parser has rejected them rather than being tested for on every line. The
                # bytes' own isspace (ASCII whitespace), as for a line buffered across reads:
                # str.isspace also takes "\x1c" and a non-breaking space, so the same line
                # was skipped in one chunk and InvalidJson when split (found by an audit).
                if line and not line.isspace():
                    append(_json_error(exc, line))

        if tail:
            if len(tail) > limit:
                append(MessageTooLarge(len(tail), limit, tail))
                self._discarding = True
            else:
                buf += tail
        return out

    def close(self) -> list[object]:
        """Signal end of stream: a final line without ``\\n`` is still decoded (leniently)."""
        out: list[object] = []
        if self._buf and not self._buf.isspace():
            out.append(_parse(self._buf))
        self._buf = bytearray()
        self._discarding = False
        return out


# --------------------------------------------------------------------------- Content-Length

_HEADERS, _BODY, _SKIP, _RESYNC = range(4)
_HEADER_END = b"\r\n\r\n"
_MARKER = b"content-length:"
# Resync lowercases the stream in windows of this size, so several bad headers in one big chunk
# cost a window each instead of a pass over the whole rest of the chunk each.
_RESYNC_WINDOW = 4096


def _parse_headers(block: bytes | bytearray) -> int:
    """Return the Content-Length declared in a header section, or raise InvalidHeader."""
    # Nearly every peer sends exactly this one header; recognising it directly roughly halves
    # the per-message framing cost.
    if block[:16] == b"Content-Length: " and len(block) < 40 and block[16:].isdigit():
        return int(block[16:])
    length: int | None = None
    for line in block.split(b"\r\n"):
        name, colon, value = line.partition(b":")
        name = name.strip().lower()
        if not colon or not name:
            raise InvalidHeader(f"malformed header line {bytes(line[:80])!r}", block)
        if name != b"content-length":
            continue
        value = value.strip()
        # isdigit() on bytes is ASCII-only, so this also rejects signs, spaces and "1e3".
        if not value.isdigit():
            raise InvalidHeader(
                f"Content-Length must be a non-negative integer, got {bytes(value[:40])!r}",
                block,
            )
        try:
            declared = int(value)
        except ValueError:  # more digits than int() accepts: certainly not a real length
            raise InvalidHeader("Content-Length has too many digits", block) from None
        if length is not None and declared != length:
            raise InvalidHeader("conflicting Content-Length headers", block)
        length = declared
    if length is None:
        raise InvalidHeader("missing Content-Length header", block)
    return length


class ContentLengthDecoder:
    """Incremental decoder for ``Content-Length``-framed (LSP-style) JSON."""

    def __init__(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        _check_limit(max_message_size)
        self.max_message_size = max_message_size
        self._buf = bytearray()
        self._state = _HEADERS
        self._searched = 0  # header bytes known not to contain the blank line
        self._remaining = 0  # body bytes still expected (_BODY) or to be dropped (_SKIP)

    @property
    def buffered(self) -> int:
        """Bytes of an unfinished message waiting for more data."""
        return len(self._buf)

    def feed(self, data: _Bytes) -> list[object]:
        """Consume ``data``; return every item it completed (values or FramingError instances)."""
        if isinstance(data, memoryview):
            data = data.tobytes()
        out: list[object] = []
        buf = self._buf
        # Work on the chunk itself when nothing is buffered: the common case of whole messages
        # per chunk then never copies into the buffer.
        if buf:
            buf += data
            work: bytes | bytearray = buf
        else:
            work = data
        pos, end = 0, len(work)

        while pos < end:
            state = self._state
            if state == _HEADERS:
                # Tolerate stray line ends between messages (some peers send one after a body).
                while pos < end and work[pos] in b"\r\n":
                    pos += 1
                if pos == end:
                    break
                start = pos + max(0, self._searched - 3)
                hend = work.find(_HEADER_END, start, pos + MAX_HEADER_SIZE + 4)
                if hend < 0:
                    if end - pos <= MAX_HEADER_SIZE + 3:
                        self._searched = end - pos
                        break
                    out.append(
                        InvalidHeader(
                            f"no end of header section within {MAX_HEADER_SIZE} bytes",
                            work[pos : pos + _RAW_PREVIEW],
                        )
                    )
                    self._enter_resync()
                    pos += 1
                    continue
                block = work[pos:hend]
                self._searched = 0
                try:
                    length = _parse_headers(block)
                except InvalidHeader as exc:
                    out.append(exc)
                    self._enter_resync()
                    pos += 1  # the bad header itself must not match the resync search
                    continue
                pos = hend + 4
                if length > self.max_message_size:
                    out.append(MessageTooLarge(length, self.max_message_size, block))
                    self._state = _SKIP
                elif end - pos >= length:
                    # The whole body is already here: parse it without a trip through _BODY.
                    out.append(_parse(work[pos : pos + length]))
                    pos += length
                    continue
                else:
                    self._state = _BODY
                self._remaining = length
            elif state == _BODY:
                n = self._remaining
                if end - pos < n:
                    break
                out.append(_parse(work[pos : pos + n]))
                pos += n
                self._state = _HEADERS
            elif state == _SKIP:
                take = min(end - pos, self._remaining)
                pos += take
                self._remaining -= take
                if self._remaining:
                    break
                self._state = _HEADERS
            else:  # _RESYNC
                pos, found = _find_marker(work, pos, end)
                if not found:
                    break
                self._state = _HEADERS

        if work is buf:
            del buf[:pos]
        else:
            buf += memoryview(work)[pos:]
        return out

    def _enter_resync(self) -> None:
        self._state = _RESYNC
        self._searched = 0

    def close(self) -> list[object]:
        """Signal end of stream: an unfinished message is reported as a FramingError."""
        out: list[object] = []
        if self._state in (_HEADERS, _BODY) and self._buf and not self._buf.isspace():
            if self._state == _BODY:
                detail = f"{len(self._buf)} of {self._remaining} body bytes"
            else:
                detail = "an incomplete header section"
            out.append(FramingError(f"stream ended inside a message ({detail})", self._buf))
        self._buf = bytearray()
        self._state = _HEADERS
        self._searched = 0
        self._remaining = 0
        return out


def _find_marker(work: bytes | bytearray, pos: int, end: int) -> tuple[int, bool]:
    """Find the next case-insensitive ``Content-Length:`` at or after ``pos``.

    Returns ``(index, True)`` on success; otherwise ``(index, False)`` where everything before
    ``index`` can be dropped and what follows might be the start of a marker split by the chunk.
    """
    keep = len(_MARKER) - 1
    while True:
        stop = min(end, pos + _RESYNC_WINDOW)
        hit = work[pos:stop].lower().find(_MARKER)
        if hit >= 0:
            return pos + hit, True
        if stop == end:
            return max(pos, end - keep), False
        pos = stop - keep


# --------------------------------------------------------------------------- selection


def decoder_for(
    framing: str, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
) -> NdjsonDecoder | ContentLengthDecoder:
    """Return a fresh decoder for ``framing`` (one of ``FRAMINGS``)."""
    if framing == "ndjson":
        return NdjsonDecoder(max_message_size)
    if framing == "content-length":
        return ContentLengthDecoder(max_message_size)
    raise ValueError(f"unknown framing {framing!r}; expected one of {', '.join(FRAMINGS)}")


def encoder_for(framing: str) -> Callable[[object], bytes]:
    """Return the encoder function for ``framing`` (one of ``FRAMINGS``)."""
    if framing == "ndjson":
        return encode_ndjson
    if framing == "content-length":
        return encode_content_length
    raise ValueError(f"unknown framing {framing!r}; expected one of {', '.join(FRAMINGS)}")
