"""Lesson 00's warm-up check: is this kernel ready for the course?"""

from __future__ import annotations

import sys

from .core import (
    _,
    case,
    run_checks,
)


def check_setup() -> None:
    """The warm-up cell of lesson 00: is this kernel ready for the course?"""

    def python_version() -> bool:
        return sys.version_info >= (3, 11)

    def imports() -> bool:
        from .. import dispatch, framing, jsonrpc  # noqa: F401

        return True

    def utf8_round_trip() -> str:
        from ..framing import NdjsonDecoder, encode_ndjson

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
