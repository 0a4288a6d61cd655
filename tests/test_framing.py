"""Tests for mcpkit.framing: NDJSON and Content-Length framing, sans-IO."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.framing import (
    DEFAULT_MAX_MESSAGE_SIZE,
    FRAMINGS,
    MAX_HEADER_SIZE,
    ContentLengthDecoder,
    FramingError,
    InvalidHeader,
    InvalidJson,
    InvalidUtf8,
    MessageTooLarge,
    NdjsonDecoder,
    decoder_for,
    encode_content_length,
    encode_ndjson,
    encoder_for,
    loads,
)

PROPERTY = settings(max_examples=200, deadline=None)

# Text that exercises multi-byte UTF-8 (accents, the euro sign, astral emoji) and the characters
# JSON has to escape, on top of whatever else hypothesis picks.
TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from('éàüñçß€😀🎉👩‍💻\n\r\t"\\/\u2028'),
    ),
    max_size=20,
)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(TEXT, children, max_size=5),
    max_leaves=12,
)

VALID = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def split_at(stream: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(cuts), len(stream)]
    return [stream[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def decode_all(decoder: NdjsonDecoder | ContentLengthDecoder, chunks: list[bytes]) -> list[object]:
    items: list[object] = []
    for chunk in chunks:
        items += decoder.feed(chunk)
    return items + decoder.close()


def one_byte_chunks(stream: bytes) -> list[bytes]:
    return [stream[i : i + 1] for i in range(len(stream))]


def errors(items: list[object]) -> list[FramingError]:
    return [item for item in items if isinstance(item, FramingError)]


# --------------------------------------------------------------------------- encoders


def test_encode_ndjson_is_compact_utf8_single_line() -> None:
    message = {"text": "café 😀\nsecond line", "n": [1, 2]}
    encoded = encode_ndjson(message)
    assert encoded == '{"text":"café 😀\\nsecond line","n":[1,2]}\n'.encode()
    assert encoded.count(b"\n") == 1
    assert json.loads(encoded) == message


def test_encode_content_length_counts_bytes_not_characters() -> None:
    encoded = encode_content_length({"t": "é"})
    body = '{"t":"é"}'.encode()
    assert len(body) == 10  # 9 characters, but é takes two bytes
    assert encoded == b"Content-Length: 10\r\n\r\n" + body


@pytest.mark.parametrize("encode", [encode_ndjson, encode_content_length])
def test_encoders_refuse_nan(encode) -> None:
    with pytest.raises(ValueError):
        encode({"x": float("nan")})


@pytest.mark.parametrize("bad", [
    {"x": float("inf")}, {"x": object()}, {(1, 2): "a tuple key"}, [{"deep": []}, set()]])
def test_the_fast_encoder_refuses_what_json_refuses(bad: object) -> None:
    with pytest.raises(ValueError):
        encode_ndjson(bad)


def test_a_message_that_contains_itself_is_refused_not_a_crash() -> None:
    loop: dict = {"jsonrpc": "2.0"}
    loop["self"] = loop
    with pytest.raises(ValueError, match="ircular"):
        encode_ndjson(loop)


def test_a_lone_surrogate_is_sent_escaped() -> None:
    assert encode_ndjson({"t": "\ud800é"}) == b'{"t":"\\ud800\\u00e9"}\n'


@pytest.mark.parametrize("text", [
    b'{"a":1}', b' {"a":1}', b'{"a":1} ', b'\t{"a":[1,2]}\r\n', b'"s"', b"7", b"null"])
def test_loads_matches_json_with_or_without_whitespace(text: bytes) -> None:
    assert loads(text) == json.loads(text)


@pytest.mark.parametrize("text", [
    b'{"a":1}x', b'{"a":1} {"b":2}', b"", b"   ", b'{"a":NaN}', b"Infinity", b"{", b"[1,]"])
def test_loads_refuses_what_is_not_one_json_value(text: bytes) -> None:
    with pytest.raises(InvalidJson):
        loads(text)


@PROPERTY
@given(message=JSON_VALUES)
def test_encoders_round_trip(message: object) -> None:
    for framing in FRAMINGS:
        decoder = decoder_for(framing)
        assert decoder.feed(encoder_for(framing)(message)) == [message]
        assert decoder.buffered == 0


# --------------------------------------------------------------------------- properties


@PROPERTY
@given(messages=st.lists(JSON_VALUES, max_size=10), data=st.data())
def test_any_chunking_gives_back_the_messages(messages: list[object], data: st.DataObject) -> None:
    for framing in FRAMINGS:
        stream = b"".join(encoder_for(framing)(m) for m in messages)
        cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=20), label=framing)
        assert decode_all(decoder_for(framing), split_at(stream, cuts)) == messages


BAD_MESSAGE = {"ndjson": b"{oops\n", "content-length": b"Content-Length: 5\r\n\r\n{oops"}


@PROPERTY
@given(
    entries=st.lists(st.one_of(JSON_VALUES.map(lambda v: (True, v)), st.just((False, None)))),
    data=st.data(),
)
def test_a_bad_message_never_loses_its_neighbours(
    entries: list[tuple[bool, object]], data: st.DataObject
) -> None:
    for framing in FRAMINGS:
        encode = encoder_for(framing)
        stream = b"".join(encode(value) if ok else BAD_MESSAGE[framing] for ok, value in entries)
        cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=20), label=framing)
        items = decode_all(decoder_for(framing), split_at(stream, cuts))
        assert len(items) == len(entries)
        for item, (ok, value) in zip(items, entries, strict=True):
            if ok:
                assert item == value
            else:
                assert isinstance(item, InvalidJson)


# --------------------------------------------------------------------------- chunking


@pytest.mark.parametrize("framing", FRAMINGS)
def test_one_message_in_many_chunks(framing: str) -> None:
    message = {"data": "x" * 50_000 + "é😀"}
    decoder = decoder_for(framing)
    chunks = one_byte_chunks(encoder_for(framing)(message))
    items: list[object] = []
    for chunk in chunks[:-1]:
        items += decoder.feed(chunk)
    assert items == []
    assert decoder.buffered > 0
    assert decoder.feed(chunks[-1]) == [message]
    assert decoder.buffered == 0


@pytest.mark.parametrize("framing", FRAMINGS)
def test_several_messages_in_one_chunk(framing: str) -> None:
    messages = [{"id": i} for i in range(5)] + [None, 3, "s", [1]]
    encode = encoder_for(framing)
    assert decoder_for(framing).feed(b"".join(encode(m) for m in messages)) == messages


@pytest.mark.parametrize("framing", FRAMINGS)
def test_multibyte_character_split_across_chunks(framing: str) -> None:
    stream = encoder_for(framing)({"emoji": "😀", "accent": "é"})
    first_byte_of_emoji = stream.index("😀".encode())
    decoder = decoder_for(framing)
    for cut in range(first_byte_of_emoji + 1, first_byte_of_emoji + 4):
        assert decoder.feed(stream[:cut]) == []
        assert decoder.feed(stream[cut:]) == [{"emoji": "😀", "accent": "é"}]


@pytest.mark.parametrize("framing", FRAMINGS)
def test_accepts_bytearray_and_memoryview(framing: str) -> None:
    stream = encoder_for(framing)([1, 2]) * 2
    decoder = decoder_for(framing)
    assert decoder.feed(bytearray(stream)) == [[1, 2], [1, 2]]
    assert decoder.feed(memoryview(stream)) == [[1, 2], [1, 2]]


@pytest.mark.parametrize("framing", FRAMINGS)
def test_json_null_and_scalars_are_items(framing: str) -> None:
    encode = encoder_for(framing)
    stream = b"".join(encode(v) for v in [None, 0, False, "", []])
    assert decoder_for(framing).feed(stream) == [None, 0, False, "", []]


# --------------------------------------------------------------------------- NDJSON specifics


def test_ndjson_crlf_line_ends() -> None:
    decoder = NdjsonDecoder()
    assert decoder.feed(b'{"a":1}\r\n{"b":2}\r') == [{"a": 1}]
    assert decoder.feed(b"\n") == [{"b": 2}]


def test_ndjson_blank_lines_are_ignored() -> None:
    decoder = NdjsonDecoder()
    stream = b'\n\n{"a":1}\n   \n\t\r\n\r\n[2]\n\n'
    assert decoder.feed(stream) == [{"a": 1}, [2]]
    assert decode_all(NdjsonDecoder(), one_byte_chunks(stream)) == [{"a": 1}, [2]]


@pytest.mark.parametrize("line", [b"\x1c", b"\xc2\xa0", b"\xe2\x80\xa8"])
def test_ndjson_a_line_of_non_ascii_space_is_invalid_however_it_is_chunked(line: bytes) -> None:
    """Only ASCII whitespace makes a blank line: str.isspace's wider set (\\x1c, a
    non-breaking space, U+2028) once skipped such a line in one chunk but not when split
    (an audit)."""
    data = line + b"\n" + b'{"id":1}\n'
    whole = NdjsonDecoder().feed(data)
    d = NdjsonDecoder()
    split = d.feed(data[:1]) + d.feed(data[1:])
    for items in (whole, split):
        assert [type(i).__name__ if isinstance(i, Exception) else i for i in items] == \
            ["InvalidJson", {"id": 1}]


def test_ndjson_close_decodes_a_final_unterminated_line() -> None:
    decoder = NdjsonDecoder()
    assert decoder.feed(b'{"a":1}\n{"b":') == [{"a": 1}]
    assert decoder.feed(b"2}") == []
    assert decoder.close() == [{"b": 2}]
    assert decoder.buffered == 0
    assert decoder.close() == []


def test_ndjson_close_ignores_blank_tail_and_reports_bad_tail() -> None:
    decoder = NdjsonDecoder()
    decoder.feed(b"[1]\n  \r")
    assert decoder.close() == []
    decoder.feed(b"[1")
    [error] = decoder.close()
    assert isinstance(error, InvalidJson)
    assert error.raw == b"[1"


def test_ndjson_invalid_utf8_then_resync() -> None:
    items = NdjsonDecoder().feed(b'{"a":"\xff\xfe"}\n{"ok":true}\n')
    assert isinstance(items[0], InvalidUtf8)
    assert items[0].raw == b'{"a":"\xff\xfe"}'
    assert items[1:] == [{"ok": True}]


def test_ndjson_invalid_json_keeps_the_parser_message() -> None:
    items = NdjsonDecoder().feed(b'{"a":1,}\n{"ok":true}\n')
    assert isinstance(items[0], InvalidJson)
    assert "Expecting property name" in str(items[0])
    assert items[0].raw == b'{"a":1,}'
    assert items[1:] == [{"ok": True}]


def test_ndjson_two_values_on_one_line_is_invalid() -> None:
    items = NdjsonDecoder().feed(b"[1][2]\n[3]\n")
    assert isinstance(items[0], InvalidJson)
    assert items[1:] == [[3]]


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    items = NdjsonDecoder().feed(b"[" * 100_000 + b"\n[1]\n")
    assert isinstance(items[0], InvalidJson)
    assert items[1:] == [[1]]


def test_ndjson_complete_oversize_line() -> None:
    decoder = NdjsonDecoder(max_message_size=10)
    items = decoder.feed(b'"0123456789abc"\n"short"\n')
    assert isinstance(items[0], MessageTooLarge)
    assert (items[0].size, items[0].limit) == (15, 10)
    assert items[1:] == ["short"]


def test_ndjson_huge_line_keeps_memory_bounded() -> None:
    limit = 64 * 1024
    decoder = NdjsonDecoder(max_message_size=limit)
    assert decoder.feed(b'[1]\n["start of a huge line') == [[1]]
    items: list[object] = []
    chunk = b"x" * 10_000
    for _ in range(1_000):  # 10 MB, 150 times the limit
        items += decoder.feed(chunk)
        assert decoder.buffered <= limit
    [error] = items  # reported exactly once for the whole line
    assert isinstance(error, MessageTooLarge)
    assert error.limit == limit and error.size > limit
    assert len(error.raw) <= 200
    assert decoder.feed(b'end"]\n{"after":1}\n') == [{"after": 1}]
    assert decoder.buffered == 0


def test_ndjson_huge_line_in_a_single_chunk() -> None:
    decoder = NdjsonDecoder(max_message_size=1000)
    items = decoder.feed(b"[1]\n" + b"y" * 5000)
    assert items[0] == [1] and isinstance(items[1], MessageTooLarge)
    assert decoder.buffered == 0
    assert decoder.feed(b"yyy\n[2]\n") == [[2]]


def test_ndjson_line_exactly_at_limit_is_accepted() -> None:
    decoder = NdjsonDecoder(max_message_size=5)
    assert decoder.feed(b"[123]\n") == [[123]]
    assert decode_all(NdjsonDecoder(max_message_size=5), one_byte_chunks(b"[123]\n")) == [[123]]


# --------------------------------------------------------------------------- Content-Length


def test_content_length_extra_headers_and_case_insensitive_names() -> None:
    stream = (
        b"content-type: application/vscode-jsonrpc; charset=utf-8\r\n"
        b"CONTENT-LENGTH:3\r\n\r\n[1]"
        b"Content-Length: 3\r\nX-Other: y\r\n\r\n[2]"
    )
    assert ContentLengthDecoder().feed(stream) == [[1], [2]]
    assert decode_all(ContentLengthDecoder(), one_byte_chunks(stream)) == [[1], [2]]


def test_content_length_tolerates_line_ends_between_messages() -> None:
    stream = encode_content_length(1) + b"\r\n" + encode_content_length(2) + b"\n"
    assert ContentLengthDecoder().feed(stream) == [1, 2]


def test_content_length_close_reports_a_truncated_message() -> None:
    decoder = ContentLengthDecoder()
    assert decoder.feed(b"Content-Length: 10\r\n\r\n[1,") == []
    [error] = decoder.close()
    assert type(error) is FramingError
    assert decoder.buffered == 0 and decoder.close() == []
    decoder.feed(b"Content-Le")
    assert isinstance(decoder.close()[0], FramingError)


@pytest.mark.parametrize(
    ("body", "kind"),
    [(b'"\xc3("', InvalidUtf8), (b"{nope}", InvalidJson), (b"", InvalidJson)],
)
def test_content_length_bad_body_skips_exactly_the_body(body: bytes, kind: type) -> None:
    stream = b"Content-Length: %d\r\n\r\n%b" % (len(body), body) + encode_content_length(VALID)
    for chunks in ([stream], one_byte_chunks(stream)):
        items = decode_all(ContentLengthDecoder(), chunks)
        assert isinstance(items[0], kind)
        assert items[0].raw == body
        assert items[1:] == [VALID]


@pytest.mark.parametrize(
    "header",
    [
        b"Content-Type: application/json\r\n",  # no Content-Length at all
        b"Content-Length: abc\r\n",
        b"Content-Length: -5\r\n",
        b"Content-Length: 12 34\r\n",
        b"Content-Length: 3\r\nContent-Length: 4\r\n",
        b"Content-Length: 3\r\ngarbage without a colon\r\n",
        b": no name\r\n",
    ],
)
def test_content_length_bad_header_then_resync(header: bytes) -> None:
    stream = header + b"\r\n" + b"[1, 2]" + encode_content_length(VALID)
    for chunks in ([stream], one_byte_chunks(stream)):
        items = decode_all(ContentLengthDecoder(), chunks)
        assert isinstance(items[0], InvalidHeader)
        assert items[0].raw == header[:-2]
        # Resync may trip over more debris first (a later Content-Length line in the same bad
        # section, say), but it always gets back on track for the valid message.
        assert all(isinstance(item, FramingError) for item in items[:-1])
        assert items[-1] == VALID


@pytest.mark.parametrize("noise", [b"hello there\r\n", b"Starting server...\n", b"oops: log"])
def test_content_length_stray_output_before_a_header_is_skipped(noise: bytes) -> None:
    # A server printing a log line to stdout is the classic way a stdio stream gets corrupted.
    stream = noise + encode_content_length(VALID) + encode_content_length(2)
    for chunks in ([stream], one_byte_chunks(stream)):
        items = decode_all(ContentLengthDecoder(), chunks)
        assert isinstance(items[0], InvalidHeader)
        assert items[1:] == [VALID, 2]


def test_content_length_oversize_header_section() -> None:
    decoder = ContentLengthDecoder()
    items: list[object] = []
    for _ in range(10):  # 10 KiB of header-ish noise with no blank line
        items += decoder.feed(b"X-Noise: " + b"n" * 1013 + b"\r\n")
        assert decoder.buffered <= MAX_HEADER_SIZE + 3
    [error] = items
    assert isinstance(error, InvalidHeader)
    assert len(error.raw) <= 200
    assert decoder.feed(encode_content_length(VALID)) == [VALID]


def test_content_length_oversize_body_is_skipped_with_bounded_memory() -> None:
    limit = 1024
    decoder = ContentLengthDecoder(max_message_size=limit)
    declared = 1_000_000
    items = decoder.feed(b"Content-Length: %d\r\n\r\n" % declared)
    [error] = items
    assert isinstance(error, MessageTooLarge)
    assert (error.size, error.limit) == (declared, limit)
    body = b"7" * declared
    for i in range(0, declared, 4096):
        assert decoder.feed(body[i : i + 4096]) == []
        assert decoder.buffered == 0
    assert decoder.feed(encode_content_length(VALID)) == [VALID]


def test_content_length_oversize_body_in_one_chunk_with_next_message() -> None:
    decoder = ContentLengthDecoder(max_message_size=4)
    stream = encode_content_length([1, 2, 3]) + encode_content_length(7)
    items = decoder.feed(stream)
    assert isinstance(items[0], MessageTooLarge)
    assert items[1:] == [7]


# --------------------------------------------------------------------------- selection


def test_decoder_and_encoder_for_known_framings() -> None:
    assert FRAMINGS == ("ndjson", "content-length")
    assert isinstance(decoder_for("ndjson"), NdjsonDecoder)
    assert isinstance(decoder_for("content-length", 10), ContentLengthDecoder)
    assert decoder_for("ndjson").max_message_size == DEFAULT_MAX_MESSAGE_SIZE
    assert decoder_for("content-length", 10).max_message_size == 10
    assert encoder_for("ndjson") is encode_ndjson
    assert encoder_for("content-length") is encode_content_length


@pytest.mark.parametrize("factory", [decoder_for, encoder_for])
def test_unknown_framing_names_the_choices(factory) -> None:
    with pytest.raises(ValueError, match="ndjson.*content-length"):
        factory("lsp")


@pytest.mark.parametrize("cls", [NdjsonDecoder, ContentLengthDecoder])
def test_max_message_size_must_be_positive(cls) -> None:
    with pytest.raises(ValueError):
        cls(max_message_size=0)


def test_error_hierarchy() -> None:
    for kind in (MessageTooLarge, InvalidUtf8, InvalidJson, InvalidHeader):
        assert issubclass(kind, FramingError)
    assert issubclass(FramingError, ValueError)
    error = InvalidJson("bad", b"z" * 1000)
    assert len(error.raw) <= 200 and isinstance(error.raw, bytes)
